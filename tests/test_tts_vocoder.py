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


def test_chunks_of_any_size_rows_of_any_length_and_one_frame_at_a_time_agree():
    voc = HarmonicNoiseVocoder()
    a = steady_frames(50, 120.0, 1.0, 0.01, LOG_AP_FLOOR)
    a[25:, 0] = math.log(180.0)  # a pitch jump mid-stream
    b = steady_frames(50, 90.0, 0.0, 0.02, 0.0)
    whole = voc.render(a)
    alone, state = [], voc.new_state(1)
    for t in range(50):
        pcm, state = voc.run(a[None, t : t + 1], state)
        alone.append(pcm[0])
    # float32: the carried phase is rounded once per chunk, so chunkings agree to about 1e-4
    assert torch.allclose(torch.cat(alone), whole, atol=2e-4)

    # Two rows stepped together in chunks of 1-23 frames; row b gets fewer valid frames in every chunk, and
    # the frames past its length (garbage here) must neither sound nor move its state.
    state, out_a, out_b, done_b = voc.new_state(2), [], [], 0
    for start, size in ((0, 1), (1, 7), (8, 16), (24, 3), (27, 23)):
        n_b = min(max(size - 2, 1), 50 - done_b)
        chunk_b = torch.full((size, a.shape[1]), 9.0)
        chunk_b[:n_b] = b[done_b : done_b + n_b]
        pcm, state = voc.run(torch.stack([a[start : start + size], chunk_b]), state, torch.tensor([size, n_b]))
        out_a.append(pcm[0])
        out_b.append(pcm[1, : n_b * HOP])
        done_b += n_b
    assert torch.allclose(torch.cat(out_a), whole, atol=2e-4)
    assert torch.allclose(torch.cat(out_b), voc.render(b[:done_b]), atol=2e-4)
    # no seam: the largest sample-to-sample jump at hop boundaries is no larger than inside hops
    x = whole.numpy()[2 * HOP :]
    jumps = np.abs(np.diff(x))
    at_boundaries = jumps[HOP - 1 :: HOP].max()
    assert at_boundaries <= 1.5 * np.percentile(jumps, 99.9)


def test_state_is_fixed_size():
    voc = HarmonicNoiseVocoder()
    assert voc.new_state(3).nbytes_per_row() == (1 + 1 + 2 * HOP + HOP + 1) * 4
