"""Word error rate with a fixed, documented normalisation applied to reference and hypothesis alike.

Normalisation (`normalize_for_wer`), in order:

1. `sonare.text.normalize`: numbers, currency, dates, times, ordinals and abbreviations are spelled
   out, so "12 dollars" and "twelve dollars" compare equal whichever side wrote digits.
2. Lowercase; typographic apostrophes become ASCII.
3. Contractions: the unambiguous ones are expanded ("can't" -> "can not", "won't" -> "will not",
   "n't" -> " not", "'re" -> " are", "'ll" -> " will", "'ve" -> " have", "'m" -> " am", and
   "cannot" -> "can not"); the ambiguous "'s" and "'d" (is/has/possessive, would/had) keep their
   word with the apostrophe dropped ("it's" -> "its"), which makes them equal to their homophones.
4. Every punctuation mark but the apostrophe separates words ("well-known" -> "well known",
   "seven,three" -> "seven three"); apostrophes left after step 3 are removed, joining their word.
5. Whitespace collapses; hesitation sounds ("um", "uh", "erm", "hmm", "mm", "mhm") are dropped, as the common
   ASR scoring conventions drop them (Whisper leaves them out of its transcripts by design, so counting them
   would score its style, not what was heard); "er" stays, as it is also "ER" (the emergency room). The result
   is a list of words.

Counts come from a word-level Levenshtein alignment (unit costs). Among alignments of minimal cost,
the backtrace prefers substitutions, then deletions, then insertions, so the split into S/D/I is
deterministic. Corpus WER is (S + D + I) summed over utterances divided by the summed reference
length, not the mean of per-utterance rates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sonare.text.normalize import normalize

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_CONTRACTIONS = [
    (re.compile(r"\bcan't\b"), "can not"),
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"\bshan't\b"), "shall not"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"'re\b"), " are"),
    (re.compile(r"'ll\b"), " will"),
    (re.compile(r"'ve\b"), " have"),
    (re.compile(r"\bi'm\b"), "i am"),
]
_HESITATIONS = frozenset({"um", "umm", "uh", "uhm", "erm", "hmm", "hm", "mm", "mmm", "mhm"})
# Anything that is not a letter, digit, apostrophe or whitespace is punctuation.
_PUNCTUATION = re.compile(r"[^\w\s']|_")


def normalize_for_wer(text: str) -> list[str]:
    """The words of `text` after the normalisation described in the module docstring."""
    text = normalize(text).lower().translate(_APOSTROPHES)
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text = _PUNCTUATION.sub(" ", text)
    # Quotes made of apostrophes and the apostrophe of "'s"/"'d" both go; words stay joined.
    text = text.replace("'", "")
    return [word for word in text.split() if word not in _HESITATIONS]


@dataclass(frozen=True)
class WordErrors:
    """Edit counts of one hypothesis against one reference, or summed over many."""

    substitutions: int = 0
    deletions: int = 0
    insertions: int = 0
    reference_words: int = 0

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def wer(self) -> float:
        """Errors per reference word; an empty reference counts as one word."""
        return self.errors / max(self.reference_words, 1)

    def __add__(self, other: WordErrors) -> WordErrors:
        return WordErrors(
            self.substitutions + other.substitutions,
            self.deletions + other.deletions,
            self.insertions + other.insertions,
            self.reference_words + other.reference_words,
        )

    def as_dict(self) -> dict[str, float | int]:
        return {
            "wer": self.wer,
            "substitutions": self.substitutions,
            "deletions": self.deletions,
            "insertions": self.insertions,
            "reference_words": self.reference_words,
        }


def align_words(reference: Sequence[str], hypothesis: Sequence[str]) -> WordErrors:
    """Minimum edit distance between two word sequences, split into S/D/I."""
    rows, cols = len(reference) + 1, len(hypothesis) + 1
    # cost[i][j]: edits turning reference[:i] into hypothesis[:j].
    cost = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        cost[i][0] = i
    for j in range(cols):
        cost[0][j] = j
    for i in range(1, rows):
        ref_word = reference[i - 1]
        above, here = cost[i - 1], cost[i]
        for j in range(1, cols):
            diagonal = above[j - 1] + (ref_word != hypothesis[j - 1])
            here[j] = min(diagonal, above[j] + 1, here[j - 1] + 1)

    substitutions = deletions = insertions = 0
    i, j = rows - 1, cols - 1
    while i > 0 or j > 0:
        if i > 0 and j > 0 and cost[i][j] == cost[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]):
            substitutions += reference[i - 1] != hypothesis[j - 1]
            i, j = i - 1, j - 1
        elif i > 0 and cost[i][j] == cost[i - 1][j] + 1:
            deletions += 1
            i -= 1
        else:
            insertions += 1
            j -= 1
    return WordErrors(substitutions, deletions, insertions, len(reference))


def utterance_errors(reference: str, hypothesis: str) -> WordErrors:
    """Word errors of one transcript after normalising both sides."""
    return align_words(normalize_for_wer(reference), normalize_for_wer(hypothesis))


def corpus_errors(pairs: Iterable[tuple[str, str]]) -> WordErrors:
    """Summed word errors over (reference, hypothesis) pairs; `.wer` is the corpus WER."""
    total = WordErrors()
    for reference, hypothesis in pairs:
        total = total + utterance_errors(reference, hypothesis)
    return total
