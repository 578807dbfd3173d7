import numpy as np
import pytest

from sonare.tts.acoustic import ENVELOPES, FRAME_DIM, HOP, N_ENV, SAMPLE_RATE, analyze, mel_bands, mel_points


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


@pytest.mark.parametrize("envelope", ENVELOPES)
def test_either_envelope_reads_a_voiced_tone(envelope):
    frames = analyze(_harmonic_tone(150.0), envelope=envelope)[10:-10]
    assert np.isfinite(frames).all()
    assert frames[:, 1].mean() > 0.9
    inside = (mel_points(N_ENV) > 300.0) & (mel_points(N_ENV) < 1500.0)
    # the tone's harmonics fall as 1/k: the envelope falls from the first few harmonics to the higher ones
    env = frames[:, 2 : 2 + N_ENV].mean(axis=0)[inside]
    assert env[0] > env[-1] + 1.0


def test_an_unknown_envelope_is_refused():
    with pytest.raises(ValueError, match="unknown envelope"):
        analyze(_harmonic_tone(150.0), envelope="lpc")


def test_the_smoothed_power_envelope_reads_noise_and_harmonics_at_the_levels_the_vocoder_renders():
    # white noise of variance s² reads s²; a harmonic of amplitude A at fundamental f0 reads A²·sr/(4·f0)
    noise = np.random.default_rng(0).normal(0.0, 0.01, 3 * SAMPLE_RATE)
    # averaged as power: the level, not the log's bias
    power = np.exp(analyze(noise, envelope="smoothed-power")[20:-20, 2 : 2 + N_ENV]).mean(axis=0)
    above_1k = mel_points(N_ENV) > 1000.0
    assert np.abs(np.log(power[above_1k]) - np.log(1e-4)).max() < 0.15

    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    tone = sum(0.05 * np.sin(2 * np.pi * k * 150.0 * t) for k in range(1, 30))
    frames = analyze(tone, envelope="smoothed-power")[20:-20]
    inside = (mel_points(N_ENV) > 300.0) & (mel_points(N_ENV) < 4000.0)
    expected = np.log(0.05**2 * SAMPLE_RATE / (4 * 150.0))
    assert np.abs(frames[:, 2 : 2 + N_ENV][:, inside].mean(axis=0) - expected).max() < 0.1
    assert frames[:, 2 + N_ENV :].mean() < np.log(0.1)  # periodic: little aperiodic share in any band


def test_mel_bands_average_without_gaps():
    bins = np.arange(513) * SAMPLE_RATE / 1024
    bands = mel_bands(N_ENV, bins)
    assert np.allclose(bands.sum(axis=1), 1.0)
    assert (bands > 0).any(axis=0)[1:-1].all()  # every bin between DC and Nyquist counts towards some band
