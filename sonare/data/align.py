"""Forced alignment of an utterance to its `sonare.text` phonemes when the engine reports no timings.

espeak-ng renders the same text with phoneme timings it knows exactly (carried to the tokens by
`sonare.data.timings`); dynamic time warping on speaker-normalised cepstra then maps the
reference's boundaries onto the utterance. Cepstra have the spectral envelope without the pitch,
and per-utterance mean and variance normalisation removes most of the speaker and channel, which
is what lets a reference in another voice stand in for the utterance. Two references (a low and a
high espeak voice) are tried and the one that warps more cheaply wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sonare.audio import features
from sonare.audio.resample import resample
from sonare.data.teachers import Timing, get_teacher
from sonare.data.timings import transfer_timings

REFERENCE_VOICES = ("en-us+m3", "en-us+f3")
N_CEPSTRA = 13
FRAME_SECONDS = features.HOP / features.SAMPLE_RATE
# Centre of analysis frame i, in seconds (frames are not centred: they start at i * HOP).
FRAME_CENTRE = features.WINDOW / 2 / features.SAMPLE_RATE


@dataclass
class Alignment:
    timings: list[Timing]
    cost: float  # mean frame distance along the warping path; lower is a closer match


def cepstra(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """Normalised MFCCs with deltas, shape (frames, 2 * (N_CEPSTRA - 1)), at 10 ms frames."""
    x = resample(audio, sample_rate, features.SAMPLE_RATE)
    mel = features.log_mel(x).numpy().astype(np.float64)
    if len(mel) == 0:
        return np.zeros((0, 2 * (N_CEPSTRA - 1)))
    n = mel.shape[1]
    k = np.arange(n)
    dct = np.cos(np.pi / n * (k[None, :] + 0.5) * np.arange(N_CEPSTRA)[:, None])
    c = mel @ dct.T
    c = c[:, 1:]  # c0 is loudness, which says nothing about the phoneme
    delta = np.gradient(c, axis=0) if len(c) > 1 else np.zeros_like(c)
    f = np.concatenate([c, delta], axis=1)
    return (f - f.mean(axis=0)) / (f.std(axis=0) + 1e-8)


def dtw_path(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Warping path (rows, cols) through a (n, m) cost matrix with symmetric steps; returns mean cost."""
    acc = _accumulate(np.ascontiguousarray(cost, dtype=np.float64))
    rows, cols = _backtrack(acc)
    return rows, cols, float(acc[-1, -1] / (cost.shape[0] + cost.shape[1]))


def _accumulate(cost: np.ndarray) -> np.ndarray:
    from numba import njit

    global _accumulate_jit
    if _accumulate_jit is None:

        @njit(cache=True)
        def run(c):
            n, m = c.shape
            acc = np.full((n, m), np.inf)
            acc[0, 0] = 2 * c[0, 0]
            for i in range(n):
                for j in range(m):
                    if i == 0 and j == 0:
                        continue
                    best = np.inf
                    if i > 0 and j > 0:
                        best = acc[i - 1, j - 1] + 2 * c[i, j]
                    if i > 0 and acc[i - 1, j] + c[i, j] < best:
                        best = acc[i - 1, j] + c[i, j]
                    if j > 0 and acc[i, j - 1] + c[i, j] < best:
                        best = acc[i, j - 1] + c[i, j]
                    acc[i, j] = best
            return acc

        _accumulate_jit = run
    return _accumulate_jit(cost)


_accumulate_jit = None


def _backtrack(acc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    i, j = acc.shape[0] - 1, acc.shape[1] - 1
    rows, cols = [i], [j]
    while i > 0 or j > 0:
        if i == 0:
            j -= 1
        elif j == 0:
            i -= 1
        else:
            k = int(np.argmin((acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])))
            i, j = (i - 1, j - 1) if k == 0 else (i - 1, j) if k == 1 else (i, j - 1)
        rows.append(i)
        cols.append(j)
    return np.array(rows[::-1]), np.array(cols[::-1])


def warp_times(times: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Map reference times (seconds) to utterance times through a path of (utterance, reference) frames."""
    ref_frames = np.clip(np.round((times - FRAME_CENTRE) / FRAME_SECONDS).astype(int), 0, cols[-1])
    # Where the path stays on one reference frame, take the middle of the utterance frames it spans.
    first = np.searchsorted(cols, ref_frames, side="left")
    last = np.searchsorted(cols, ref_frames, side="right") - 1
    frames = (rows[first] + rows[last]) / 2
    offset = times - (ref_frames * FRAME_SECONDS + FRAME_CENTRE)
    return np.maximum(frames * FRAME_SECONDS + FRAME_CENTRE + offset, 0.0)


def align(
    audio: np.ndarray, sample_rate: int, tokens: list[str], normalized: str, language: str = "en-us"
) -> Alignment:
    """Timings for `tokens` (the `sonare.text` phonemes of `normalized`) in `audio`."""
    target = cepstra(audio, sample_rate)
    duration = len(audio) / sample_rate
    espeak = get_teacher("espeak")
    best: Alignment | None = None
    for voice in REFERENCE_VOICES:
        reference = espeak.synthesize(normalized, voice if language == "en-us" else language)
        ref_timings = transfer_timings(reference.phones or [], tokens).timings
        ref = cepstra(reference.audio, reference.sample_rate)
        if len(ref) == 0 or len(target) == 0:
            continue
        distance = np.sqrt(((target[:, None, :] - ref[None, :, :]) ** 2).sum(axis=2))
        rows, cols, cost = dtw_path(distance)
        if best is not None and cost >= best.cost:
            continue
        starts = warp_times(np.array([t.start for t in ref_timings]), rows, cols)
        ends = warp_times(np.array([t.end for t in ref_timings]), rows, cols)
        best = Alignment(_contiguous(tokens, starts, ends, duration), cost)
    if best is None:
        raise ValueError("cannot align an empty utterance")
    return best


def _contiguous(tokens: list[str], starts: np.ndarray, ends: np.ndarray, duration: float) -> list[Timing]:
    """Spans that follow one another: each token starts where the previous one ended."""
    starts = np.minimum(np.maximum.accumulate(starts), duration)
    ends = np.minimum(np.maximum(np.maximum.accumulate(ends), starts), duration)
    out = []
    for i, token in enumerate(tokens):
        start = out[-1].end if out else float(starts[0])
        end = float(starts[i + 1]) if i + 1 < len(tokens) else float(ends[i])
        out.append(Timing(token, start, max(start, end)))
    return out
