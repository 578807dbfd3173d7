import numpy as np
import pytest

from sonare.tts.acoustic import FRAME_DIM, HOP, SAMPLE_RATE, analyze


def _harmonic_tone(f0: float, seconds: float = 0.6) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return 0.1 * sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 12))


@pytest.mark.parametrize("tracker", ["dio", "harvest"])
def test_either_tracker_reads_the_pitch_of_a_voiced_tone(tracker):
    audio = _harmonic_tone(150.0)
    frames = analyze(audio, f0_tracker=tracker)
    assert frames.shape == (len(audio) // HOP + 1, FRAME_DIM)
    middle = frames[10:-10]
    assert middle[:, 1].mean() > 0.9  # voiced
    assert np.median(np.exp(middle[:, 0])) == pytest.approx(150.0, rel=0.03)


def test_an_unknown_tracker_is_refused():
    with pytest.raises(ValueError, match="unknown F0 tracker"):
        analyze(_harmonic_tone(150.0), f0_tracker="yin")
