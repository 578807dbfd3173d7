import numpy as np
import pytest

from sonare.audio.resample import StreamingResampler, resample


def _tone(rate: int, hz: float, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


@pytest.mark.parametrize(("orig", "target"), [(48000, 16000), (22050, 16000), (8000, 16000), (16000, 16000)])
def test_offline_length_and_frequency(orig, target):
    y = resample(_tone(orig, 440.0), orig, target)
    assert y.dtype == np.float32
    assert abs(len(y) - orig * target / orig) <= 1
    spectrum = np.abs(np.fft.rfft(y))
    assert abs(np.argmax(spectrum) * target / len(y) - 440.0) < 2.0


@pytest.mark.parametrize(("orig", "target"), [(48000, 16000), (22050, 16000), (8000, 16000), (44100, 24000)])
def test_streaming_equals_offline(orig, target):
    x = np.random.default_rng(0).standard_normal(orig).astype(np.float32) * 0.1
    stream = StreamingResampler(orig, target)
    rng = np.random.default_rng(1)
    pieces, i = [], 0
    while i < len(x):
        n = int(rng.integers(0, 3000))
        pieces.append(stream.process(x[i : i + n]))
        i += n
    pieces.append(stream.flush())
    streamed = np.concatenate(pieces)
    offline = resample(x, orig, target)
    assert len(streamed) == len(offline)
    # Edge effects may differ within a filter length of either end; the middle must agree.
    edge = 64
    np.testing.assert_allclose(streamed[edge:-edge], offline[edge:-edge], atol=1e-5)


def test_stream_can_be_reused_after_flush():
    x = np.random.default_rng(2).standard_normal(8000).astype(np.float32)
    stream = StreamingResampler(8000, 16000)
    first = np.concatenate([stream.process(x), stream.flush()])
    second = np.concatenate([stream.process(x), stream.flush()])
    np.testing.assert_array_equal(first, second)
