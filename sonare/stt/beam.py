"""CTC prefix beam search with a word language model, one encoder frame at a time.

Each hypothesis is a prefix: the words it has closed and the word it is spelling. Per frame every prefix is
extended by blank, by repeating its last letter, and by each letter the CTC head gives more than
`prune` log-probability (usually one or two), the standard prefix-merging rules keeping the probability of
ending in blank and in a letter apart. A hypothesis pays `alpha * log P(word | two words before) + beta`
when it closes a word (`sonare.stt.lm`); spelling its way out of every known word costs `alpha * oov` at
once, so such prefixes fall out of the beam early instead of when the space finally comes. Prefixes (and
their extensions) scoring more than `margin` below the best are dropped, and at most `beam` are kept.

Key terms (a client's recall boost: product names, jargon) are words the search treats as likely in any context:
each word of a term costs at most `BeamSettings.keyterm` of language model, so an unknown name is spelled without
the unknown-word charge and a known but rare one competes with the common words it sounds like.

Stability, as the streaming API promises (a partial revises at most its last word): the words that every
hypothesis in the beam agrees on are committed and can never change, since every later hypothesis descends
from one of these. A word of the best hypothesis that ended `commit_seconds` ago is committed even if some
weaker hypothesis disagrees, by dropping those: a lingering long shot must not hold words back from the
partials. A partial shows the committed words and one tentative word of the best hypothesis.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from sonare.stt.decode import word_at
from sonare.stt.lm import BOS, EOS, WordLM
from sonare.stt.messages import Word
from sonare.stt.vocab import ALPHABET, BLANK, SPACE, written_to_spoken

NEG = -1e30


@dataclass(frozen=True)
class BeamSettings:
    alpha: float = 0.7  # language model weight
    beta: float = 3.0  # bonus per word (balances the LM's cost of every word against deletions)
    oov: float = -20.0  # log-probability charged for a word the LM does not know
    # A key term's words are never less likely than one in 20, whatever the language model says: about what it
    # gives a common word in a usual context, so a name wins where the audio supports it (1/100 finds fewer, 1/5
    # no more: docs/benchmarks.md, STT, session 40).
    keyterm: float = math.log(1 / 20)
    # At most `beam` prefixes are kept per frame, and only those within `margin` of the best: where the acoustics
    # are clear the margin does the pruning and few survive, where they are not (noise) the count bounds the
    # cost. 12 prefixes without a margin lost 3 points of WER clean and 6 in babble to search errors; wider
    # still gains a little more clean but costs several times the CPU in noise (docs/benchmarks.md, STT).
    beam: int = 48
    margin: float = 9.0
    prune: float = -8.0  # letters below this log-probability in a frame are not tried
    commit_seconds: float = 0.4  # a word of the best hypothesis is final this long after its last letter


def _logsumexp(a: float, b: float) -> float:
    if a < b:
        a, b = b, a
    return a if b <= NEG else a + math.log1p(math.exp(b - a))


@dataclass
class _Hyp:
    blank: float  # log P(prefix, last frame blank)
    letter: float  # log P(prefix, last frame a letter)
    lm: float  # language model score of the prefix so far
    words: tuple[Word, ...]  # closed words, with frames of their first and last letters as times
    first: int  # frame of the first letter of the word being spelled
    last_frame: int  # frame of its latest letter
    last: int  # the prefix's last symbol (SPACE after a closed word, BLANK at the start)

    def total(self) -> float:
        return _logsumexp(self.blank, self.letter) + self.lm


class BeamDecoder:
    """Same interface as `GreedyDecoder`: `push` frames, read `text()` / `words`, `take_segment()`."""

    def __init__(self, lm: WordLM, settings: BeamSettings, frame_seconds: float, keyterms: Iterable[str] = ()):
        self.lm = lm
        self.settings = settings
        self.frame_seconds = frame_seconds  # the model's CTC frame
        self.boosted = frozenset(w for term in keyterms for w in written_to_spoken(term).split())
        self.boosted_prefixes = frozenset(w[:i] for w in self.boosted for i in range(1, len(w) + 1))
        self._reset()

    def _reset(self) -> None:
        self.hyps: dict[tuple[tuple[str, ...], str], _Hyp] = {((), ""): _Hyp(0.0, NEG, 0.0, (), 0, 0, BLANK)}
        self.committed = 0  # leading words all hypotheses share

    # -- scoring ------------------------------------------------------------------------------------------

    def _word_score(self, words: tuple[str, ...], word: str) -> float:
        history = (BOS, BOS, *words)[-2:]
        lp = self.lm.log_prob(history[0], history[1], word)
        if word in self.boosted:
            lp = self.settings.keyterm if lp is None else max(lp, self.settings.keyterm)
        elif lp is None:  # unknown: charged `oov` now, unless its spelling already paid when it left every word
            lp = self.settings.oov if word in self.lm.prefixes else 0.0
        return self.settings.beta + self.settings.alpha * lp

    def _letter_score(self, part: str, extended: str) -> float:
        """The cost of spelling `extended` after `part`: `alpha * oov` when it leaves every known word and key term."""
        known, boosted = self.lm.prefixes, self.boosted_prefixes  # two sets: no per-stream copy of the LM's
        if (not part or part in known or part in boosted) and extended not in known and extended not in boosted:
            return self.settings.alpha * self.settings.oov
        return 0.0

    # -- decoding -----------------------------------------------------------------------------------------

    def push(self, logp: np.ndarray, frame: int) -> None:
        """Feed one CTC frame's log-probabilities (V,)."""
        s = self.settings
        row = logp.tolist()
        letters = [k for k in np.flatnonzero(logp > s.prune).tolist() if k != BLANK]
        if not letters:
            # No letter worth trying: every prefix only holds, so none merge or leave the beam and the general
            # loop below reduces to this update in place.
            for h in self.hyps.values():
                both = _logsumexp(h.blank, h.letter)
                h.letter = h.letter + row[h.last] if h.last != BLANK else NEG
                h.blank = both + row[BLANK]
            self._commit(frame)
            return
        new: dict[tuple[tuple[str, ...], str], _Hyp] = {}
        held = [(_logsumexp(h.blank, h.letter), key, h) for key, h in self.hyps.items()]  # P(prefix), per prefix
        floor = max(both + h.lm for both, _, h in held) - s.margin

        def add(key, blank: float, letter: float, lm: float, words, first: int, last_frame: int, last: int) -> None:
            hyp = new.get(key)
            if hyp is None:
                new[key] = _Hyp(blank, letter, lm, words, first, last_frame, last)
            else:
                hyp.blank = _logsumexp(hyp.blank, blank)
                hyp.letter = _logsumexp(hyp.letter, letter)

        for both, key, h in held:
            if both + h.lm < floor:
                continue
            words, part = key
            add(key, both + row[BLANK], NEG, h.lm, h.words, h.first, h.last_frame, h.last)
            if h.last != BLANK:  # the last symbol held over this frame (no blank between: one symbol)
                add(key, NEG, h.letter + row[h.last], h.lm, h.words, h.first, h.last_frame, h.last)
            for k in letters:
                # A repeated symbol only counts as new after a blank.
                source = h.blank if k == h.last else both
                if source + row[k] + h.lm + (s.beta if k == SPACE else 0.0) < floor:
                    continue  # below the floor even before its letter's or word's cost
                if k == SPACE:
                    if not part:
                        add(key, NEG, source + row[k], h.lm, h.words, h.first, h.last_frame, SPACE)
                        continue
                    closed = (*words, part)
                    word = word_at(part, h.first, h.last_frame, self.frame_seconds)
                    lm = h.lm + self._word_score(words, part)
                    add((closed, ""), NEG, source + row[k], lm, (*h.words, word), 0, 0, SPACE)
                else:
                    extended = part + ALPHABET[k - 1]
                    lm = h.lm + self._letter_score(part, extended)
                    first = frame if not part else h.first
                    add((words, extended), NEG, source + row[k], lm, h.words, first, frame, k)
        ranked = sorted(((h.total(), key, h) for key, h in new.items()), key=itemgetter(0), reverse=True)
        kept = ranked[0][0] - s.margin
        self.hyps = {key: h for total, key, h in ranked[: s.beam] if total >= kept}
        self._commit(frame)

    def _commit(self, frame: int) -> None:
        best = self._best().words
        settled = frame * self.frame_seconds - self.settings.commit_seconds
        n = self.committed
        while n < len(best) and best[n].end <= settled:
            n += 1
        if n > self.committed:
            agreed = tuple(w.word for w in best[:n])
            self.hyps = {key: h for key, h in self.hyps.items() if key[0][:n] == agreed}
        keys = [words for words, _ in self.hyps]
        shortest = min(len(w) for w in keys)
        while n < shortest and all(w[n] == keys[0][n] for w in keys):
            n += 1
        self.committed = n

    def _best_key(self) -> tuple[tuple[str, ...], str]:
        """The best hypothesis's closed words and the word it is spelling."""
        return max(self.hyps, key=lambda key: self.hyps[key].total())

    def _best(self) -> _Hyp:
        return self.hyps[self._best_key()]

    @property
    def words(self) -> list[Word]:
        """The committed words of the segment (they will not change)."""
        return list(self._best().words[: self.committed])

    def text(self) -> str:
        """Committed words and the best hypothesis's next word (closed or being spelled), each after a space."""
        words, part = self._best_key()
        shown = list(words[: self.committed])
        tentative = words[self.committed] if len(words) > self.committed else part
        if tentative:
            shown.append(tentative)
        return "".join(" " + w for w in shown)

    def sentence_end_probability(self) -> float:
        """The language model's probability that the best hypothesis's words, the one being spelled included, end
        a sentence: near zero after "and", "the", a filler or half a number. A last word the model does not know
        (a name, or letters the head is still unsure of) leaves it the chance of a sentence ending at all, which is
        low too: the turn head then has to be very sure (`sonare.stt.turns`)."""
        words, part = self._best_key()
        history = (BOS, BOS, *words, *([part] if part else []))[-2:]
        return math.exp(self.lm.log_prob(history[0], history[1], EOS))

    def take_segment(self) -> list[Word]:
        """Close the segment with its best full hypothesis (the word being spelled and the sentence end
        scored), leaving the decoder ready for the next."""

        def final(item: tuple[tuple[tuple[str, ...], str], _Hyp]) -> tuple[float, tuple[Word, ...]]:
            (words, part), h = item
            score, out = h.total(), h.words
            if part:
                score += self._word_score(words, part)
                words, out = (*words, part), (*out, word_at(part, h.first, h.last_frame, self.frame_seconds))
            history = (BOS, BOS, *words)[-2:]
            return score + self.settings.alpha * self.lm.log_prob(history[0], history[1], EOS), out

        _, words = max((final(item) for item in self.hyps.items()), key=lambda pair: pair[0])
        self._reset()
        return list(words)
