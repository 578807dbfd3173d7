"""The acoustic frame the TTS model predicts, and how it is measured from teacher audio.

One frame every HOP samples at SAMPLE_RATE (11.6 ms), as a vector of FRAME_DIM numbers:

    [0]                 log F0 in Hz, interpolated through unvoiced frames
    [1]                 voicing, 1 voiced / 0 unvoiced
    [2 : 2+N_ENV]       natural log of the spectral envelope (power) at N_ENV mel-spaced frequencies
    [2+N_ENV : ]        log aperiodicity (periodic/aperiodic energy split) at N_AP mel-spaced frequencies

This is a source-filter description: smooth enough for a small model to predict well, and rendered to a
waveform by the streaming harmonic-plus-noise vocoder in `sonare.tts.vocoder`. Analysis uses WORLD
(`pyworld`: DIO + StoneMask for F0, CheapTrick for the envelope, D4C for aperiodicity) at training time only.
Harvest can track F0 instead (`F0_TRACKERS`): twenty times slower, and on 100 held-out sentences no more
intelligible once analysed and rendered back (docs/benchmarks.md, TTS, session 25).
"""

from __future__ import annotations

import numpy as np

SAMPLE_RATE = 22050
HOP = 256
ANALYSIS_FFT = 1024
N_ENV = 64
N_AP = 8
FRAME_DIM = 2 + N_ENV + N_AP
F0_FLOOR, F0_CEIL = 50.0, 500.0
LOG_AP_FLOOR = float(np.log(1e-3))
LOG_ENV_FLOOR = float(np.log(1e-10))


def hz_to_mel(f: np.ndarray | float) -> np.ndarray:
    return 2595.0 * np.log10(1.0 + np.asarray(f) / 700.0)


def mel_to_hz(m: np.ndarray | float) -> np.ndarray:
    return 700.0 * (10.0 ** (np.asarray(m) / 2595.0) - 1.0)


def mel_points(n: int, sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """n frequencies (Hz) evenly spaced on the mel scale from 0 to Nyquist."""
    return mel_to_hz(np.linspace(0.0, hz_to_mel(sample_rate / 2), n))


def interpolation_matrix(points_hz: np.ndarray, bins_hz: np.ndarray) -> np.ndarray:
    """(len(bins), len(points)) matrix that linearly interpolates values at `points` (on the mel scale)."""
    pm, bm = hz_to_mel(points_hz), hz_to_mel(bins_hz)
    eye = np.eye(len(points_hz))
    return np.stack([np.interp(bm, pm, eye[i]) for i in range(len(points_hz))], axis=1)


FRAME_PERIOD_MS = HOP / SAMPLE_RATE * 1000.0
F0_TRACKERS = ("dio", "harvest")


def world_parameters(audio: np.ndarray, f0_tracker: str = "dio") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """WORLD's full-resolution analysis of SAMPLE_RATE audio, one row per frame: F0 (T,) in Hz (0 unvoiced), the
    spectral envelope (T, ANALYSIS_FFT // 2 + 1) and the aperiodicity (same shape)."""
    import pyworld

    x = np.asarray(audio, dtype=np.float64)
    if f0_tracker == "dio":
        f0, times = pyworld.dio(x, SAMPLE_RATE, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_PERIOD_MS)
        f0 = pyworld.stonemask(x, f0, times, SAMPLE_RATE)
    elif f0_tracker == "harvest":
        f0, times = pyworld.harvest(x, SAMPLE_RATE, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_PERIOD_MS)
    else:
        raise ValueError(f"unknown F0 tracker {f0_tracker!r}; one of {F0_TRACKERS}")
    sp = pyworld.cheaptrick(x, f0, times, SAMPLE_RATE, fft_size=ANALYSIS_FFT)
    ap = pyworld.d4c(x, f0, times, SAMPLE_RATE, fft_size=ANALYSIS_FFT)
    return f0, sp, ap


def analyze(audio: np.ndarray, sample_rate: int = SAMPLE_RATE, f0_tracker: str = "dio") -> np.ndarray:
    """Teacher audio (float, mono, SAMPLE_RATE) -> frames (T, FRAME_DIM) float32, T = len // HOP + 1."""
    if sample_rate != SAMPLE_RATE:
        raise ValueError(f"analysis expects {SAMPLE_RATE} Hz audio, got {sample_rate}")
    f0, sp, ap = world_parameters(audio, f0_tracker)

    bins = np.arange(ANALYSIS_FFT // 2 + 1) * SAMPLE_RATE / ANALYSIS_FFT
    env = np.log(np.maximum(_sample_on_mel(sp, bins, N_ENV), np.exp(LOG_ENV_FLOOR)))
    log_ap = np.log(np.clip(_sample_on_mel(ap, bins, N_AP), 1e-3, 1.0))
    voiced = (f0 > 0).astype(np.float64)
    frames = np.concatenate([_interpolated_log_f0(f0)[:, None], voiced[:, None], env, log_ap], axis=1)
    return frames.astype(np.float32)


def _sample_on_mel(spectra: np.ndarray, bins_hz: np.ndarray, n: int) -> np.ndarray:
    points = mel_points(n)
    return np.stack([np.interp(points, bins_hz, row) for row in spectra])


def _interpolated_log_f0(f0: np.ndarray) -> np.ndarray:
    voiced = np.nonzero(f0 > 0)[0]
    if len(voiced) == 0:
        return np.full(len(f0), np.log(100.0))
    return np.interp(np.arange(len(f0)), voiced, np.log(f0[voiced]))
