"""The CTC alphabet: blank, space, apostrophe and a-z; and turning transcripts into targets.

Targets are the words as spoken, lower-cased: "12 dollars" must already read "twelve dollars" (the corpus
stores the teacher's input after `sonare.text.normalize`). A transcript with characters the alphabet cannot
spell (digits left unspoken, other scripts) is not a usable target and `encode` says so by returning None.
"""

from __future__ import annotations

import re

BLANK = 0
SPACE = 1
ALPHABET = " '" + "abcdefghijklmnopqrstuvwxyz"  # ids 1.. in this order; 0 is the CTC blank
VOCAB_SIZE = 1 + len(ALPHABET)

_TO_ID = {c: i + 1 for i, c in enumerate(ALPHABET)}
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_SEPARATORS = re.compile(r"[\s\-\u2010-\u2015/]+")
_PUNCTUATION = re.compile(r"[.,;:!?\"()\[\]{}\u201c\u201d\u00ab\u00bb*]")


def spoken_text(text: str) -> str:
    """Lower-case words separated by single spaces, punctuation (but not apostrophes inside words) removed."""
    text = _PUNCTUATION.sub(" ", text.lower().translate(_APOSTROPHES))
    words = (w.strip("'") for w in _SEPARATORS.split(text))
    return " ".join(w for w in words if w)


def written_to_spoken(text: str) -> str:
    """Written text ("Call 911 at 5pm.") as the recogniser spells it: normalised (`sonare.text.normalize`), then
    `spoken_text`. The word language model learns its words this way, so key terms are looked up this way too."""
    from sonare.text.normalize import normalize

    return spoken_text(normalize(text))


def encode(text: str) -> list[int] | None:
    """Target ids of a transcript, or None when the alphabet cannot spell it."""
    spoken = spoken_text(text)
    if not spoken or any(c not in _TO_ID for c in spoken):
        return None
    return [_TO_ID[c] for c in spoken]


def decode(ids: list[int]) -> str:
    """Ids (no blanks) back to text."""
    return "".join(ALPHABET[i - 1] for i in ids if i != BLANK)
