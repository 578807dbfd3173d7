"""Carry an engine's phone timings over to the shared `sonare.text` phoneme tokens.

Engines that report timings label phones their own way: Piper one IPA character at a time (with
stress marks and spaces as symbols of their own), espeak-ng one IPA phoneme per event, flite in
its own phone set rendered as IPA. All of them derive from text, so after removing stress marks
and tie bars the character sequences agree almost everywhere with the tokens of
`sonare.text.phonemize`. The characters are matched, each target token takes the span of its
matched characters, and tokens left unmatched (pauses, punctuation, word gaps, stress marks) share
the time between their matched neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from sonare.data.teachers import Timing
from sonare.text.phonemes import PUNCTUATION

STRESS = frozenset("ˈˌ")
TIE = "\u0361"
WORD_BREAK = " "


def _sound_chars(label: str) -> str:
    return "".join(ch for ch in label if ch not in STRESS and ch != TIE)


def _is_silent(token: str) -> bool:
    """Tokens that take no time of their own: stress marks."""
    return bool(token) and all(ch in STRESS for ch in token)


@dataclass
class Transfer:
    timings: list[Timing]
    matched: float  # fraction of the target's phoneme characters matched to the same source character
    covered: float  # ... matched or standing in place of a different source character


def transfer_timings(source: list[Timing], target: list[str]) -> Transfer:
    """Timings for each target token, contiguous and non-decreasing, from labelled source spans."""
    src_chars: list[str] = []
    src_spans: list[tuple[float, float]] = []
    carry: float | None = None  # start of a stress mark, handed to the next sound
    for t in source:
        chars = _sound_chars(t.label)
        if not chars:
            carry = t.start if carry is None else carry
            continue
        start = t.start if carry is None else carry
        carry = None
        step = (t.end - start) / len(chars)
        for k, ch in enumerate(chars):
            src_chars.append(ch)
            src_spans.append((start + k * step, start + (k + 1) * step))

    tgt_chars: list[str] = []
    owner: list[int] = []
    for i, token in enumerate(target):
        for ch in _sound_chars(token):
            tgt_chars.append(ch)
            owner.append(i)
    # Only phoneme characters count towards the match score: engines that report no pauses or
    # punctuation (espeak-ng) would otherwise look worse than they are.
    phoneme_chars = sum(1 for k in owner if _counts(target[k]))

    spans: list[list[float] | None] = [None] * len(target)

    def claim(target_char: int, start: float, end: float) -> None:
        span = spans[owner[target_char]]
        if span is None:
            spans[owner[target_char]] = [start, end]
        else:
            span[0], span[1] = min(span[0], start), max(span[1], end)

    equal = replaced = 0
    for op, a1, a2, b1, b2 in SequenceMatcher(None, tgt_chars, src_chars, autojunk=False).get_opcodes():
        if op == "equal":
            for k in range(a2 - a1):
                claim(a1 + k, *src_spans[b1 + k])
                equal += _counts(target[owner[a1 + k]])
        elif op == "replace":
            # Same place, different sounds (an accent's vowel, a voicing difference): the target
            # characters share the replaced source span in proportion.
            lo, hi = src_spans[b1][0], src_spans[b2 - 1][1]
            step = (hi - lo) / (a2 - a1)
            for k in range(a2 - a1):
                claim(a1 + k, lo + k * step, lo + (k + 1) * step)
                replaced += _counts(target[owner[a1 + k]])
    return Transfer(
        _fill(target, spans, source),
        matched=equal / phoneme_chars if phoneme_chars else 1.0,
        covered=(equal + replaced) / phoneme_chars if phoneme_chars else 1.0,
    )


def _counts(token: str) -> bool:
    return token != WORD_BREAK and token not in PUNCTUATION


def _fill(target: list[str], spans: list[list[float] | None], source: list[Timing]) -> list[Timing]:
    """Resolve unmatched tokens and make the spans contiguous."""
    n = len(target)
    if n == 0:
        return []
    known = [i for i in range(n) if spans[i] is not None]
    if not known:
        lo = source[0].start if source else 0.0
        hi = source[-1].end if source else 0.0
        spans = [None] * n
        known = []
        edges = [lo + (hi - lo) * k / n for k in range(n + 1)]
        return [Timing(target[i], edges[i], edges[i + 1]) for i in range(n)]
    starts = [0.0] * n
    ends = [0.0] * n
    for i in known:
        starts[i], ends[i] = spans[i]  # type: ignore[misc]
    # Runs of unknown tokens before, between and after the known ones share the gap they sit in.
    bounds = [-1, *known, n]
    for a, b in zip(bounds, bounds[1:], strict=False):
        run = list(range(a + 1, b))
        if not run:
            continue
        lo = ends[a] if a >= 0 else starts[b]
        hi = starts[b] if b < n else ends[a]
        hi = max(hi, lo)
        weights = [0.0 if _is_silent(target[i]) else 1.0 for i in run]
        total = sum(weights) or 1.0
        t = lo
        for i, w in zip(run, weights, strict=True):
            starts[i] = t
            t += (hi - lo) * w / total
            ends[i] = t
    # Contiguity: each token starts where the previous one ends; overlaps go to the later token.
    out: list[Timing] = []
    previous_end = starts[0]
    for i in range(n):
        start = previous_end
        next_start = starts[i + 1] if i + 1 < n else ends[i]
        end = max(start, min(ends[i], next_start) if i + 1 < n else ends[i])
        if i + 1 < n and end < next_start:
            end = next_start  # a gap no token claims belongs to the token before it
        out.append(Timing(target[i], start, end))
        previous_end = end
    return out
