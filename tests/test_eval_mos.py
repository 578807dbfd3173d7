import numpy as np
import pytest

from sonare.eval.mos import dnsmos


@pytest.fixture(scope="module")
def speech() -> tuple[np.ndarray, int]:
    from sonare.data.teachers import get_teacher

    clip = get_teacher("espeak").synthesize("The quick brown fox jumps over the lazy dog by the river.", "en-us")
    return clip.audio, clip.sample_rate


def test_clean_speech_scores_above_the_same_speech_in_heavy_noise(speech):
    audio, rate = speech
    noise = np.random.default_rng(0).normal(size=audio.size).astype(np.float32)
    noise *= np.sqrt(np.mean(audio**2) / np.mean(noise**2))  # 0 dB SNR
    noisy = audio + noise
    clean_score, noisy_score = dnsmos(audio, rate), dnsmos(noisy / np.abs(noisy).max(), rate)
    for score in (clean_score, noisy_score):
        assert all(1.0 <= v <= 5.0 for v in score.as_dict().values())
    assert clean_score.bak > noisy_score.bak + 1.0
    assert clean_score.ovrl > noisy_score.ovrl + 0.5
    assert clean_score.p808 > noisy_score.p808


def test_out_of_range_samples_are_clipped_and_empty_clips_refused(speech):
    audio, rate = speech
    assert dnsmos(audio * 4.0, rate).ovrl >= 1.0
    with pytest.raises(ValueError):
        dnsmos(np.zeros(0, dtype=np.float32), rate)
