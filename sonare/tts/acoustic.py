"""The acoustic frame the TTS model predicts, and how it is measured from teacher audio.

One frame every HOP samples at SAMPLE_RATE (11.6 ms), as a vector of FRAME_DIM numbers:

    [0]                 log F0 in Hz, interpolated through unvoiced frames
    [1]                 voicing, 1 voiced / 0 unvoiced
    [2 : 2+N_ENV]       natural log of the spectral envelope (power) at N_ENV mel-spaced frequencies
    [2+N_ENV : ]        log aperiodicity (periodic/aperiodic energy split) at N_AP mel-spaced frequencies

This is a source-filter description: smooth enough for a small model to predict well, and rendered to a
waveform by the streaming harmonic-plus-noise vocoder in `sonare.tts.vocoder`. Analysis runs at training time
only: WORLD (`pyworld`) tracks F0 (DIO + StoneMask) and measures aperiodicity (D4C). The envelope is one of
`ENVELOPES`:

  - "cheaptrick": WORLD's CheapTrick, envelope and aperiodicity read at the mel points. The shipped voice
    learnt these.
  - "smoothed-power": the power spectrum under a three-period window smoothed over one F0
    (`spectral_envelope`), envelope and aperiodicity averaged over mel bands. Rendered back as they are, these
    frames lose a third fewer of the teacher's words (7.8% against 11.5% on 60 held-out sentences); a model
    trained on them reads no better than on CheapTrick's, which it had already averaged (docs/benchmarks.md,
    TTS, session 48).

Harvest can track F0 instead of DIO (`F0_TRACKERS`): twenty times slower, and on 100 held-out sentences no more
intelligible once analysed and rendered back (session 25).
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
ENVELOPES = ("cheaptrick", "smoothed-power")
ANALYSIS_BINS_HZ = np.arange(ANALYSIS_FFT // 2 + 1) * SAMPLE_RATE / ANALYSIS_FFT
UNVOICED_F0 = 120.0  # sets the envelope's window (25 ms) and smoothing where there is no pitch


def mel_bands(n: int, bins_hz: np.ndarray) -> np.ndarray:
    """(n, len(bins)) triangular weights, each row summing to one, centred on `mel_points(n)` and reaching the
    neighbouring points: each band's average, which the vocoder reads back as the value at the band's centre."""
    centres = hz_to_mel(mel_points(n))
    step = centres[1] - centres[0]
    edges = np.concatenate([[centres[0] - step], centres, [centres[-1] + step]])
    mel = hz_to_mel(bins_hz)
    rising = (mel - edges[:-2, None]) / (edges[1:-1, None] - edges[:-2, None])
    falling = (edges[2:, None] - mel) / (edges[2:, None] - edges[1:-1, None])
    weights = np.clip(np.minimum(rising, falling), 0.0, None)
    return weights / weights.sum(axis=1, keepdims=True)


def track_f0(audio: np.ndarray, f0_tracker: str = "dio") -> tuple[np.ndarray, np.ndarray]:
    """WORLD's F0 of SAMPLE_RATE audio, one frame per HOP: F0 (T,) in Hz (0 unvoiced) and frame times (T,) in s."""
    import pyworld

    x = np.asarray(audio, dtype=np.float64)
    if f0_tracker == "dio":
        f0, times = pyworld.dio(x, SAMPLE_RATE, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_PERIOD_MS)
        return pyworld.stonemask(x, f0, times, SAMPLE_RATE), times
    if f0_tracker == "harvest":
        return pyworld.harvest(x, SAMPLE_RATE, f0_floor=F0_FLOOR, f0_ceil=F0_CEIL, frame_period=FRAME_PERIOD_MS)
    raise ValueError(f"unknown F0 tracker {f0_tracker!r}; one of {F0_TRACKERS}")


def source_filter_parameters(
    audio: np.ndarray, f0_tracker: str = "dio", envelope: str = "cheaptrick"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The full-resolution analysis of SAMPLE_RATE audio, one row per frame: F0 (T,) in Hz (0 unvoiced), the power
    envelope (T, ANALYSIS_FFT // 2 + 1) measured as `envelope` says, and D4C's aperiodicity (same shape). With
    CheapTrick's envelope these are WORLD's own parameters, which its synthesizer takes."""
    import pyworld

    if envelope not in ENVELOPES:
        raise ValueError(f"unknown envelope {envelope!r}; one of {ENVELOPES}")
    x = np.asarray(audio, dtype=np.float64)
    f0, times = track_f0(x, f0_tracker)
    if envelope == "cheaptrick":
        sp = pyworld.cheaptrick(x, f0, times, SAMPLE_RATE, fft_size=ANALYSIS_FFT)
    else:
        sp = spectral_envelope(x, f0)
    ap = pyworld.d4c(x, f0, times, SAMPLE_RATE, fft_size=ANALYSIS_FFT)
    return f0, sp, ap


def spectral_envelope(audio: np.ndarray, f0: np.ndarray) -> np.ndarray:
    """(T, ANALYSIS_FFT // 2 + 1) power envelope, frame t centred on sample t·HOP: the power spectrum under a
    Hann window three periods of the frame's F0 long (of UNVOICED_F0 where unvoiced), averaged over one F0
    across frequency so that the harmonics merge into the envelope between them.

    Levels follow WORLD's convention: white noise of variance s² reads s², and a harmonic of amplitude A spread
    over one F0 reads A²·sr/(4·f0), what the vocoder's harmonics are scaled from."""
    x = np.pad(np.asarray(audio, dtype=np.float64), ANALYSIS_FFT)
    bin_hz = SAMPLE_RATE / ANALYSIS_FFT
    out = np.empty((len(f0), ANALYSIS_FFT // 2 + 1))
    for t, pitch in enumerate(np.where(f0 > 0, f0, UNVOICED_F0)):
        half = min(int(round(1.5 * SAMPLE_RATE / pitch)), ANALYSIS_FFT // 2 - 1)
        centre = t * HOP + ANALYSIS_FFT
        window = np.hanning(2 * half + 3)[1:-1]
        power = np.abs(np.fft.rfft(x[centre - half : centre + half + 1] * window, ANALYSIS_FFT)) ** 2
        width = max(int(round(pitch / bin_hz)), 1)
        out[t] = np.convolve(power, np.full(width, 1.0 / width), mode="same") / np.sum(window**2)
    return out


def analyze(
    audio: np.ndarray, sample_rate: int = SAMPLE_RATE, f0_tracker: str = "dio", envelope: str = "cheaptrick"
) -> np.ndarray:
    """Teacher audio (float, mono, SAMPLE_RATE) -> frames (T, FRAME_DIM) float32, T = len // HOP + 1."""
    if sample_rate != SAMPLE_RATE:
        raise ValueError(f"analysis expects {SAMPLE_RATE} Hz audio, got {sample_rate}")
    f0, sp, ap = source_filter_parameters(audio, f0_tracker, envelope)
    if envelope == "cheaptrick":
        env, aperiodic = _at_mel_points(sp, N_ENV), _at_mel_points(ap, N_AP)
    else:
        env_bands, ap_bands = mel_bands(N_ENV, ANALYSIS_BINS_HZ), mel_bands(N_AP, ANALYSIS_BINS_HZ)
        env = sp @ env_bands.T
        # a band's aperiodicity: the aperiodic share of the power in it
        aperiodic = (sp * ap) @ ap_bands.T / np.maximum(sp @ ap_bands.T, 1e-30)
    log_env = np.log(np.maximum(env, np.exp(LOG_ENV_FLOOR)))
    log_ap = np.log(np.clip(aperiodic, np.exp(LOG_AP_FLOOR), 1.0))
    voiced = (f0 > 0).astype(np.float64)
    frames = np.concatenate([_interpolated_log_f0(f0)[:, None], voiced[:, None], log_env, log_ap], axis=1)
    return frames.astype(np.float32)


def _at_mel_points(spectra: np.ndarray, n: int) -> np.ndarray:
    points = mel_points(n)
    return np.stack([np.interp(points, ANALYSIS_BINS_HZ, row) for row in spectra])


def _interpolated_log_f0(f0: np.ndarray) -> np.ndarray:
    voiced = np.nonzero(f0 > 0)[0]
    if len(voiced) == 0:
        return np.full(len(f0), np.log(100.0))
    return np.interp(np.arange(len(f0)), voiced, np.log(f0[voiced]))
