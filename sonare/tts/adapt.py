"""Speaker adaptation of acoustic frames: how a derived or cloned voice differs from the voice it starts from.

A voice embedding is the decoder's speaker vector (d_speaker numbers, a built-in voice's row of the learned
table) followed by ADAPTATION_DIM numbers that transform the decoder's frames before the vocoder:

    [0]              pivot      log F0 (Hz) the range change turns around: the base voice's median
    [1]              shift      added to log F0                           (0: unchanged)
    [2]              range      log of the scale of log-F0 excursions      (0: unchanged)
    [3]              warp       log of the formant frequency ratio         (0: unchanged; > 0 a shorter tract)
    [4 : 4+N_ENV]    envelope   added to the warped log envelope           (0: unchanged)

These are the dimensions along which speakers differ most in a source-filter description (pitch level and
liveliness, vocal-tract length, timbre and spectral tilt), so the same small set of numbers
describes any speaker, heard or not; `sonare.voices.encoder` measures them from a clip. Each number moves one
property smoothly, so a weighted mix of embeddings is a voice between its parts.

A trained voice's own adaptation is its calibration (`sonare.voices.encoder.calibration`): trained to regress
log F0, the model speaks in a narrower pitch range than its teacher (0.16 against 0.23 for joe, half the 16-84
percentile spread), and with a little more low-frequency weight; the calibration moves its measured pitch and
average envelope to the teacher's. Derived built-in voices and cloned voices change the calibrated voice
(`compose`).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from sonare.tts.acoustic import N_ENV, hz_to_mel, mel_points

PIVOT, SHIFT, RANGE, WARP = 0, 1, 2, 3
ENVELOPE = slice(4, 4 + N_ENV)
ADAPTATION_DIM = 4 + N_ENV

_MEL_POINTS = mel_points(N_ENV)
_MEL_TOP = float(hz_to_mel(_MEL_POINTS[-1]))


def identity() -> np.ndarray:
    return np.zeros(ADAPTATION_DIM, np.float32)


def from_transform(
    pivot_lf0: float, pitch_semitones: float = 0.0, pitch_range: float = 1.0, formant_ratio: float = 1.0
) -> np.ndarray:
    """The adaptation of a speaker transform as the data factory records it (`sonare.data` speaker transforms)."""
    a = identity()
    a[PIVOT] = pivot_lf0
    a[SHIFT] = pitch_semitones * np.log(2.0) / 12.0
    a[RANGE] = np.log(pitch_range)
    a[WARP] = np.log(formant_ratio)
    return a


def warp_positions(warp: Tensor) -> Tensor:
    """(B,) log formant ratios -> (B, N_ENV) fractional indices into the envelope where each point reads from.

    Formants move up by exp(warp): the warped envelope at frequency f is the original at f / exp(warp).
    """
    source_hz = torch.as_tensor(_MEL_POINTS, dtype=warp.dtype)[None, :] / warp.exp()[:, None]
    mel = 2595.0 * torch.log10(1.0 + source_hz / 700.0)
    return (mel / _MEL_TOP * (N_ENV - 1)).clamp(0, N_ENV - 1)


def warp_envelope(env: Tensor, warp: Tensor) -> Tensor:
    """env: (B, T, N_ENV) log envelope, warp: (B,) -> the envelope with its formants scaled by exp(warp)."""
    pos = warp_positions(warp)  # (B, N_ENV)
    lo = pos.floor().long().clamp(max=N_ENV - 2)
    frac = (pos - lo)[:, None, :]
    lo = lo[:, None, :].expand(-1, env.shape[1], -1)
    return env.gather(2, lo) * (1 - frac) + env.gather(2, lo + 1) * frac


def compose(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """`second` applied to the voice `first` makes, where `first` moves pitch and envelope but not formants (a
    calibration, `sonare.voices.encoder.calibration`): the pitch changes compose exactly (an affine map of log F0
    each), `first`'s envelope correction moves with `second`'s formant warp and adds to `second`'s."""
    if first[WARP]:
        raise ValueError("the first adaptation must not warp formants")
    if not first.any():
        return second.astype(np.float32)  # an uncalibrated voice: `second` as it is, pivot and all
    out = second.astype(np.float64)
    pivot_image = first[PIVOT] + first[SHIFT]  # where `first` sends log F0 = its pivot
    out[PIVOT] = first[PIVOT]
    out[SHIFT] = pivot_image + second[SHIFT] + (pivot_image - second[PIVOT]) * np.expm1(second[RANGE]) - first[PIVOT]
    out[RANGE] = first[RANGE] + second[RANGE]
    moved = warp_envelope(
        torch.as_tensor(first[ENVELOPE], dtype=torch.float64)[None, None], torch.tensor([second[WARP]])
    )
    out[ENVELOPE] = moved[0, 0].numpy() + second[ENVELOPE]
    return out.astype(np.float32)


def adapt_frames(frames: Tensor, adaptation: Tensor) -> Tensor:
    """frames: (B, T, FRAME_DIM) denormalised, adaptation: (B, ADAPTATION_DIM) -> adapted frames."""
    if not adaptation.any():
        return frames  # an uncalibrated trained voice: nothing to do
    a = adaptation[:, None, :]  # (B, 1, K)
    lf0 = frames[..., :1]
    lf0 = lf0 + a[..., SHIFT : SHIFT + 1] + (lf0 - a[..., PIVOT : PIVOT + 1]) * (a[..., RANGE : RANGE + 1].exp() - 1)
    env = warp_envelope(frames[..., 2 : 2 + N_ENV], adaptation[:, WARP]) + a[..., ENVELOPE]
    return torch.cat([lf0, frames[..., 1:2], env, frames[..., 2 + N_ENV :]], dim=-1)
