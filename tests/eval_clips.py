"""Speech fixtures for the evaluator tests, synthesized with the espeak-ng teacher (fast, offline)."""

from __future__ import annotations

import numpy as np

from sonare.eval.turns import Pause


def spoken_conversation(
    phrases: list[str], gaps: list[tuple[float, str]], voice: str = "en-us"
) -> tuple[np.ndarray, int, list[Pause]]:
    """Phrases joined by silences of known length; each gap (seconds, kind) follows its phrase.

    The engine's own leading and trailing silence is cut at the first and last word, so the pause
    labels are exact.
    """
    from sonare.data.teachers import get_teacher

    espeak = get_teacher("espeak")
    rate = espeak.sample_rate
    pieces: list[np.ndarray] = []
    pauses: list[Pause] = []
    cursor = 0
    for phrase, (gap, kind) in zip(phrases, gaps, strict=True):
        clip = espeak.synthesize(phrase, voice)
        first, last = round(clip.words[0].start * rate), round(clip.words[-1].end * rate)
        gap_samples = round(gap * rate)
        pieces += [clip.audio[first:last], np.zeros(gap_samples, dtype=np.float32)]
        cursor += last - first
        pauses.append(Pause(cursor / rate, (cursor + gap_samples) / rate, kind))
        cursor += gap_samples
    return np.concatenate(pieces), rate, pauses
