"""16 kHz log-mel features (80 bins, 25 ms window, 10 ms hop) and frame levels, offline and streaming.

Frames are not centred: frame i covers samples [i * HOP, i * HOP + WINDOW). That makes every frame
depend only on audio already received, so the streaming extractor emits exactly the offline frames
as soon as their last sample arrives, with no look-ahead and no padding at either end.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import torch

SAMPLE_RATE = 16000
WINDOW = 400  # 25 ms
HOP = 160  # 10 ms
N_FFT = 512
N_MELS = 80
F_MIN = 20.0
F_MAX = 7600.0
LOG_FLOOR = 1e-6


def _hz_to_mel(hz: np.ndarray) -> np.ndarray:
    return 2595.0 * np.log10(1.0 + hz / 700.0)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)


def _band_edges_hz() -> np.ndarray:
    """The N_MELS + 2 filter edges, equally spaced in mel; filter k spans edges k..k+2, centred on k+1."""
    return _mel_to_hz(np.linspace(_hz_to_mel(np.array(F_MIN)), _hz_to_mel(np.array(F_MAX)), N_MELS + 2))


@functools.cache
def mel_filterbank() -> torch.Tensor:
    """Triangular filters on the HTK mel scale, shape (N_FFT // 2 + 1, N_MELS), each of unit area."""
    bin_hz = np.linspace(0.0, SAMPLE_RATE / 2, N_FFT // 2 + 1)
    edges = _band_edges_hz()
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising = (bin_hz[None, :] - lower) / (centre - lower)
    falling = (upper - bin_hz[None, :]) / (upper - centre)
    filters = np.maximum(0.0, np.minimum(rising, falling))
    # Equal-area normalisation keeps wide high-frequency bands from dominating the spectrum.
    filters *= 2.0 / (upper - lower)
    return torch.from_numpy(filters.T.astype(np.float32))


def band_widths_hz() -> np.ndarray:
    """Each mel filter's half base width: weighting the (unit-area) filters' outputs by it sums a frame's mel
    power back to its power over frequency, since the unit-height triangles add up to one across the band."""
    edges = _band_edges_hz()
    return (edges[2:] - edges[:-2]) / 2.0


def warp_log_mel(frames: np.ndarray, factor: float) -> np.ndarray:
    """Log-mel frames (n, N_MELS) as the same speech would give with every frequency scaled by `factor`.

    Scaling frequencies is what a longer or shorter vocal tract does to formants (vocal-tract length
    perturbation), so training on warped frames shows a recogniser more speakers than the corpus has. Each
    bin reads the interpolated bin at its centre frequency / factor; sources beyond the band take its edge.
    """
    centres = _band_edges_hz()[1:-1]
    position = np.interp(_hz_to_mel(centres / factor), _hz_to_mel(centres), np.arange(N_MELS, dtype=np.float64))
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, N_MELS - 1)
    weight = (position - low).astype(frames.dtype)
    return frames[:, low] * (1 - weight) + frames[:, high] * weight


@functools.cache
def _window() -> torch.Tensor:
    return torch.hann_window(WINDOW, periodic=True, dtype=torch.float32)


def num_frames(num_samples: int) -> int:
    """How many frames `log_mel` returns for a signal of this length."""
    return 0 if num_samples < WINDOW else 1 + (num_samples - WINDOW) // HOP


def _framed(audio: np.ndarray | torch.Tensor) -> torch.Tensor:
    """(..., samples) -> (..., frames, WINDOW): the samples of every frame, none for a signal shorter than one."""
    x = torch.as_tensor(audio, dtype=torch.float32)
    if x.shape[-1] < WINDOW:
        return x.new_zeros((*x.shape[:-1], 0, WINDOW))
    return x.unfold(-1, WINDOW, HOP)


def log_mel(audio: np.ndarray | torch.Tensor) -> torch.Tensor:
    """Log-mel spectrogram of 16 kHz audio shaped (..., samples); returns (..., frames, N_MELS) float32."""
    frames = _framed(audio)
    if not frames.shape[-2]:  # the FFT refuses an empty batch
        return frames.new_zeros((*frames.shape[:-2], 0, N_MELS))
    power = torch.fft.rfft(frames * _window(), n=N_FFT).abs().square()
    return torch.log(torch.clamp(power @ mel_filterbank(), min=LOG_FLOOR))


def frame_levels(audio: np.ndarray | torch.Tensor) -> torch.Tensor:
    """RMS level (full scale 1) of each `log_mel` frame's samples, unwindowed: (..., samples) -> (..., frames)."""
    return _framed(audio).square().mean(-1).sqrt()


class StreamingFrames:
    """Per-frame measures of audio pushed in chunks of any size, equal to `transform` of the whole signal: log-mel
    frames by default, or `frame_levels` over the same framing."""

    def __init__(self, transform: Callable[[np.ndarray], torch.Tensor] = log_mel) -> None:
        self._transform = transform
        self._pending = np.zeros(0, dtype=np.float32)

    def reset(self) -> None:
        self._pending = np.zeros(0, dtype=np.float32)

    def push(self, chunk: np.ndarray) -> torch.Tensor:
        """Add samples; returns the frames completed by them, (n, N_MELS) log-mel or (n,) levels (n may be 0)."""
        buffer = np.concatenate([self._pending, np.asarray(chunk, dtype=np.float32).reshape(-1)])
        n = num_frames(len(buffer))
        # Keep the samples the next frame still needs: everything from its first sample on.
        self._pending = buffer[n * HOP :]
        return self._transform(buffer[: (n - 1) * HOP + WINDOW] if n else buffer[:0])
