"""Noise mixed into cached log-mel frames while the recogniser trains.

The corpus carries noisy copies of a part of its clips (the data factory's `augment` sections), rendered once, so
a run hears the same noisy clip every pass and most clips only clean. Mel power adds for independent sources (the
cross terms average out within a mel band), so noise can be mixed into frames already computed:

    mixed = log(exp(speech) + g · exp(noise)),   g set so that speech level / g · noise level = SNR

with levels measured as the data factory's `add_noise` measures them (the louder half of the speech frames, the
noise's mean over its whole generated clip), so `snr_db` reads as the corpus's and the evaluator's does. The noises
are the data factory's own generators (`sonare.data.augment.make_noise`), drawn from seeds far from the
evaluator's per-clip ones.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from sonare.audio.features import LOG_FLOOR, band_widths_hz, log_mel
from sonare.data.augment import SAMPLE_RATE, make_noise

BANK_SECONDS = 20.0  # each clip of noise; a longer utterance hears it repeated
BANK_CLIPS = 8  # clips per kind of noise
BANK_SEED = 1_000_000  # above any per-clip seed the evaluator draws (seed + clip index)
_FLOOR = np.log(LOG_FLOOR) + 1e-3


@functools.cache
def noise_bank(kinds: tuple[str, ...], seed: int) -> tuple[np.ndarray, ...]:
    """BANK_CLIPS generated clips of each kind of noise as unit-level mel power (`unit_power`), computed once
    per run."""
    n = int(BANK_SECONDS * SAMPLE_RATE)
    return tuple(
        unit_power(log_mel(make_noise(kind, n, BANK_SEED + seed * 1000 + k * BANK_CLIPS + i).astype(np.float32)))
        for k, kind in enumerate(kinds)
        for i in range(BANK_CLIPS)
    )


def _power(frames: np.ndarray) -> np.ndarray:
    """Mel power of log-mel frames, where the floor stands for no power at all (it only keeps the log finite)."""
    return np.where(frames > _FLOOR, np.exp(frames.astype(np.float64)), 0.0)


def unit_power(noise: np.ndarray | torch.Tensor) -> np.ndarray:
    """Log-mel frames (T, n_mels) of a whole noise clip as mel power scaled to a mean power of one over the clip,
    the level the data factory scales to its SNR (so a stretch where babble falls silent stays silent)."""
    power = _power(np.asarray(noise))
    return power / float((power @ band_widths_hz()).mean())


def mix_noise(x: np.ndarray, noise: np.ndarray, snr_db: float, start: int = 0) -> np.ndarray:
    """Frames x (T, n_mels) of natural-log mel power with the stretch of unit-level `noise` (T', n_mels, mel power:
    `unit_power`) from frame `start` on (wrapping round) mixed in `snr_db` below the speech level: the mean power of
    its louder half of frames."""
    stretch = np.take(noise, np.arange(start, start + len(x)), axis=0, mode="wrap")
    speech = _power(x)
    frame_power = speech @ band_widths_hz()
    level = float(frame_power[frame_power >= np.median(frame_power)].mean()) if len(x) else 0.0
    return np.log(np.maximum(speech + level * 10 ** (-snr_db / 10) * stretch, LOG_FLOOR)).astype(np.float32)
