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
   would score its style, not what was heard); "er" stays, as it is also "ER" (the emergency room).
6. British spellings of common words become American ones ("grey" -> "gray", "colour" -> "color"): the same
   word heard, spelled by the transcriber's habit. The result is a list of words.

Counts come from a word-level Levenshtein alignment (unit costs) in which a compound written closed on one
side and open on the other ("spellbook" against "spell book") matches at no cost: spoken, they are the same
words, and a dictionary's choice between the two spellings is not an error of hearing. Both halves must have
at least three letters, so "away" never matches "a way". Among alignments of minimal cost, the backtrace
prefers matches and substitutions, then deletions, then insertions, so the split into S/D/I is
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
# British spelling -> American, for words the held-out texts and their transcripts use or could.
_BRITISH_AMERICAN = """
grey/gray greys/grays colour/color colours/colors coloured/colored colourful/colorful favourite/favorite
favourites/favorites favour/favor flavour/flavor flavours/flavors honour/honor neighbour/neighbor
neighbours/neighbors neighbourhood/neighborhood labour/labor behaviour/behavior humour/humor rumour/rumor
harbour/harbor armour/armor odour/odor vapour/vapor centre/center centres/centers theatre/theater
metre/meter metres/meters litre/liter litres/liters fibre/fiber tyre/tire tyres/tires organise/organize
organised/organized realise/realize realised/realized recognise/recognize recognised/recognized
apologise/apologize apologised/apologized analyse/analyze analysed/analyzed travelled/traveled
travelling/traveling cancelled/canceled cancelling/canceling labelled/labeled modelling/modeling
jewellery/jewelry catalogue/catalog programme/program cheque/check licence/license defence/defense
offence/offense pyjamas/pajamas plough/plow aeroplane/airplane moustache/mustache aluminium/aluminum
"""
_AMERICAN_SPELLING = dict(pair.split("/") for pair in _BRITISH_AMERICAN.split())
_COMPOUND_PART = 3  # letters each half of a closed compound needs to match its open spelling
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
    return [_AMERICAN_SPELLING.get(word, word) for word in text.split() if word not in _HESITATIONS]


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


def _joins(whole: str, first: str, second: str) -> bool:
    """Whether `whole` is the closed spelling of the open compound `first second`."""
    return min(len(first), len(second)) >= _COMPOUND_PART and whole == first + second


def align_words(reference: Sequence[str], hypothesis: Sequence[str]) -> WordErrors:
    """Minimum edit distance between two word sequences, split into S/D/I; a closed compound on one side
    matches its open spelling on the other at no cost."""
    rows, cols = len(reference) + 1, len(hypothesis) + 1
    # cost[i][j]: edits turning reference[:i] into hypothesis[:j].
    cost = [[0] * cols for _ in range(rows)]
    for i in range(rows):
        cost[i][0] = i
    for j in range(cols):
        cost[0][j] = j

    def split_in_hypothesis(i: int, j: int) -> bool:  # reference[i-1] is hypothesis[j-2:j] written closed
        return j >= 2 and _joins(reference[i - 1], hypothesis[j - 2], hypothesis[j - 1])

    def split_in_reference(i: int, j: int) -> bool:  # hypothesis[j-1] is reference[i-2:i] written closed
        return i >= 2 and _joins(hypothesis[j - 1], reference[i - 2], reference[i - 1])

    for i in range(1, rows):
        ref_word = reference[i - 1]
        above, here = cost[i - 1], cost[i]
        for j in range(1, cols):
            diagonal = above[j - 1] + (ref_word != hypothesis[j - 1])
            here[j] = min(diagonal, above[j] + 1, here[j - 1] + 1)
            if split_in_hypothesis(i, j):
                here[j] = min(here[j], above[j - 2])
            if split_in_reference(i, j):
                here[j] = min(here[j], cost[i - 2][j - 1])

    substitutions = deletions = insertions = 0
    i, j = rows - 1, cols - 1
    while i > 0 or j > 0:
        if i > 0 and j > 0 and split_in_hypothesis(i, j) and cost[i][j] == cost[i - 1][j - 2]:
            i, j = i - 1, j - 2
        elif i > 0 and j > 0 and split_in_reference(i, j) and cost[i][j] == cost[i - 2][j - 1]:
            i, j = i - 2, j - 1
        elif i > 0 and j > 0 and cost[i][j] == cost[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]):
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
