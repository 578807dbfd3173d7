import numpy as np
import pytest
import soundfile as sf

from sonare.audio.io import decode_audio, load_audio, save_audio


def _tone(rate: int = 16000) -> np.ndarray:
    t = np.arange(rate // 2) / rate
    return (0.4 * np.sin(2 * np.pi * 330 * t)).astype(np.float32)


@pytest.mark.parametrize("suffix", [".wav", ".flac"])
def test_save_and_load_round_trip(tmp_path, suffix):
    x = _tone()
    path = tmp_path / f"a{suffix}"
    save_audio(path, x, 16000)
    y, rate = load_audio(path)
    assert rate == 16000 and y.dtype == np.float32
    np.testing.assert_allclose(y, x, atol=1 / 32768 + 1e-6)
    assert not list(tmp_path.glob(".*tmp"))


def test_stereo_is_averaged_and_resampled(tmp_path):
    x = _tone(22050)
    sf.write(tmp_path / "s.wav", np.stack([x, np.zeros_like(x)], axis=1), 22050)
    y, rate = load_audio(tmp_path / "s.wav", sample_rate=16000)
    assert rate == 16000
    assert abs(len(y) - len(x) * 16000 / 22050) <= 1
    assert abs(np.abs(y).max() - 0.2) < 0.01


def test_decode_from_bytes(tmp_path):
    save_audio(tmp_path / "b.flac", _tone(), 16000)
    y, rate = decode_audio((tmp_path / "b.flac").read_bytes())
    assert rate == 16000 and len(y) == 8000


def test_mp3_when_libsndfile_supports_it(tmp_path):
    if "MP3" not in sf.available_formats():
        pytest.skip("libsndfile without MP3")
    save_audio(tmp_path / "c.mp3", _tone(), 16000)
    y, rate = load_audio(tmp_path / "c.mp3")
    assert rate == 16000
    assert abs(len(y) - 8000) < 2000  # encoder padding
