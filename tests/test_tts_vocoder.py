"""The streaming vocoder reproduces the levels its frames describe, and streams without seams."""

import math

import numpy as np
import torch

from sonare.tts.acoustic import FRAME_DIM, HOP, LOG_AP_FLOOR, N_ENV, SAMPLE_RATE
from sonare.tts.vocoder import HarmonicNoiseVocoder


def steady_frames(n: int, f0: float, voiced: float, power: float, log_ap: float) -> torch.Tensor:
    frame = torch.zeros(FRAME_DIM)
    frame[0] = math.log(f0)
    frame[1] = voiced
    frame[2 : 2 + N_ENV] = math.log(power)
    frame[2 + N_ENV :] = log_ap
    return frame.repeat(n, 1)


def test_unvoiced_frames_give_white_noise_of_the_envelope_power():
    voc = HarmonicNoiseVocoder()
    pcm = voc.render(steady_frames(400, 100.0, 0.0, 0.01, 0.0))
    rms = pcm[4 * HOP :].pow(2).mean().sqrt().item()
    assert abs(rms - 0.1) < 0.01  # WORLD's convention: white noise of variance s^2 has envelope s^2


def test_voiced_frames_give_harmonics_at_f0_with_the_envelope_level():
    voc = HarmonicNoiseVocoder()
    f0, power = 150.0, 0.02
    pcm = voc.render(steady_frames(300, f0, 1.0, power, LOG_AP_FLOOR)).numpy()[8 * HOP :]
    spectrum = np.abs(np.fft.rfft(pcm * np.hanning(len(pcm)))) / (np.hanning(len(pcm)).sum() / 2)
    freqs = np.fft.rfftfreq(len(pcm), 1 / SAMPLE_RATE)
    expected = 2 * math.sqrt(power * f0 / SAMPLE_RATE)
    for k in (1, 3, 10):
        peak = spectrum[np.abs(freqs - k * f0) < f0 / 4].max()
        assert abs(peak - expected) / expected < 0.15
    between = spectrum[np.abs(freqs - 2.5 * f0) < f0 / 8].max()
    assert between < expected / 10


def test_batched_rows_are_independent_and_streaming_is_seamless():
    voc = HarmonicNoiseVocoder()
    a = steady_frames(50, 120.0, 1.0, 0.01, LOG_AP_FLOOR)
    a[25:, 0] = math.log(180.0)  # a pitch jump mid-stream
    b = steady_frames(50, 90.0, 0.0, 0.02, 0.0)
    state = voc.new_state(2)
    rows = []
    for t in range(50):
        pcm, state = voc.step(torch.stack([a[t], b[t]]), state)
        rows.append(pcm)
    batched = torch.cat(rows, dim=1)
    alone = voc.new_state(1)
    solo = []
    for t in range(50):
        pcm, alone = voc.step(a[t : t + 1], alone)
        solo.append(pcm)
    assert torch.allclose(batched[0], torch.cat(solo, dim=1)[0], atol=1e-5)
    # no seam: the largest sample-to-sample jump at hop boundaries is no larger than inside hops
    x = batched[0].numpy()[2 * HOP :]
    jumps = np.abs(np.diff(x))
    at_boundaries = jumps[HOP - 1 :: HOP].max()
    assert at_boundaries <= 1.5 * np.percentile(jumps, 99.9)


def test_state_is_fixed_size():
    voc = HarmonicNoiseVocoder()
    assert voc.new_state(3).nbytes_per_row() == (1 + 1 + 2 * HOP + HOP + 1) * 4
