"""Varied, natural English sentences for training text, with a held-out split.

Sentences come from three sources mixed at fixed rates: domain templates with wide slot
vocabularies (contact centres, healthcare, games, sales, assistants, everyday talk, questions,
commands; numbers, money, dates, times and phone numbers in written form), the WordNet usage
examples shipped in sonare/assets/text (wide, natural vocabulary), and short replies. Some are
opened with a hesitation ("Um, so I think ...") or joined into long compound sentences. That mix is
the "mixed" style; the "answers" style gives lone answers instead, one value each ("Tuesday.", "42."),
and the "words" style one word of the WordNet examples said alone ("Umbrella.", "Cancel."), each for a
corpus section of them.

The split is a property of the sentence itself: a hash of its canonical form (case-folded, letters
and digits only) puts about 2% in "heldout". It does not depend on the seed or on the text
normaliser, so training never sees a held-out sentence whatever it generates.
"""

from __future__ import annotations

import hashlib
import random
import re

from sonare.text.corpus import corpus_sentences
from sonare.text.sentence_templates import ANSWERS, CONNECTIVES, FILLERS, SHORT_REPLIES, TEMPLATES, fill

SPLITS = ("train", "heldout")
_HELDOUT_PER_10000 = 200

# Rates of each kind of sentence; the rest are single template sentences.
_SHORT_REPLY_RATE = 0.07
_CORPUS_RATE = 0.33
_COMPOUND_RATE = 0.10
_FILLER_RATE = 0.08

_NOT_ALNUM = re.compile(r"[^\w]+")
# A word said alone: lower case in running text (no names, no sentence openers), letters only, and not a
# function word, which nobody says on its own.
_LONE_WORD = re.compile(r"(?<![\w'-])[a-z]{3,}(?![\w'-])")
_FUNCTION_WORDS_TEXT = """
    the and for are but not you all any can had her was one our out has him his how its may who did get
    let she too use that with have this will your from they been were said each which their there what
    about would these other into more some than then them when could also only such very just over most
    even where while after before being those through because should whom upon onto unto does done
    shall might must ought itself himself herself themselves yourself ourselves myself whose whether
    though although until unless since among within without against between during toward towards
"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())
# First words that lose their capital when a sentence follows other words; a sentence starting
# with anything else (a name, a place) is not joined to another.
_LOWERCASE_STARTS_TEXT = """
    a an the he she it they we you his her its their our my your this that these those there some
    many most all one each every if when after before while since as so but and or no not please can
    could would will should do does did is are was were have has had let how what where why who
    which don set turn remind play wake convert send call read navigate translate put bring write
    sign preheat wait click fill take add equip press sell meet watch buy thank tickets prices
    revenue interest between
"""
_LOWERCASE_STARTS = frozenset(_LOWERCASE_STARTS_TEXT.split())


def canonical(sentence: str) -> str:
    """The form used for de-duplication and the split: case-folded letters and digits."""
    return " ".join(_NOT_ALNUM.sub(" ", sentence.casefold()).split())


def split_of(sentence: str) -> str:
    """ "heldout" for about 2% of sentences, chosen by a hash of the canonical form, else "train"."""
    digest = hashlib.sha256(canonical(sentence).encode()).digest()
    return "heldout" if int.from_bytes(digest[:8], "big") % 10000 < _HELDOUT_PER_10000 else "train"


def _continuation(sentence: str) -> str | None:
    """`sentence` written to follow other words, or None when its first word is a name."""
    first = sentence.split(" ", 1)[0].rstrip(",").split("'")[0]
    if first == "I":
        return sentence
    if first.lower() in _LOWERCASE_STARTS:
        return sentence[0].lower() + sentence[1:]
    return None


def _template_sentence(rng: random.Random) -> str:
    domain = rng.choice(tuple(TEMPLATES))
    return fill(rng.choice(TEMPLATES[domain]), rng)


def _sentence(rng: random.Random) -> str:
    draw = rng.random()
    if draw < _SHORT_REPLY_RATE:
        return rng.choice(SHORT_REPLIES)
    draw -= _SHORT_REPLY_RATE
    if draw < _CORPUS_RATE:
        return rng.choice(corpus_sentences())
    draw -= _CORPUS_RATE
    if draw < _COMPOUND_RATE:
        # Two statements: both end in a period, and the second can continue the first.
        first = _template_sentence(rng)
        second = rng.choice([_template_sentence(rng), rng.choice(corpus_sentences())])
        joined = _continuation(second)
        if first.endswith(".") and second.endswith(".") and joined is not None:
            return first[:-1] + rng.choice(CONNECTIVES) + joined
        return first
    draw -= _COMPOUND_RATE
    sentence = _template_sentence(rng)
    if draw < _FILLER_RATE:
        return rng.choice(FILLERS) + (_continuation(sentence) or sentence)
    return sentence


def _answer(rng: random.Random) -> str:
    answer = fill(rng.choice(ANSWERS), rng)
    return answer[0].upper() + answer[1:]


def lone_words(sentence: str) -> list[str]:
    """The words of `sentence` that the "words" style may say alone, in order (repeats kept)."""
    return [w for w in _LONE_WORD.findall(sentence) if w not in _FUNCTION_WORDS]


def _lone_word(rng: random.Random) -> str:
    # A word of a random example sentence, so a word comes as often as the examples use it.
    while True:
        words = lone_words(rng.choice(corpus_sentences()))
        if words:
            return rng.choice(words).capitalize() + "."


# The ways a sentence is drawn, by style name.
_DRAWS = {"mixed": _sentence, "answers": _answer, "words": _lone_word}
STYLES = tuple(_DRAWS)


def generate_sentences(n: int, seed: int = 0, split: str = "train", style: str = "mixed") -> list[str]:
    """`n` distinct sentences of `split` ("train" or "heldout") in `style` (one of STYLES), the same for the
    same seed.

    A larger `n` extends a smaller one: the first sentences do not change.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}, not {style!r}")
    draw = _DRAWS[style]
    rng = random.Random(seed)
    seen: set[str] = set()
    sentences: list[str] = []
    budget = 200 * n + 100_000  # held-out sentences are rare, so allow many draws
    for _ in range(budget):
        if len(sentences) == n:
            return sentences
        sentence = " ".join(draw(rng).split())
        key = canonical(sentence)
        if key in seen:
            continue
        seen.add(key)
        if split_of(sentence) == split:
            sentences.append(sentence)
    if len(sentences) < n:
        raise ValueError(f"only {len(sentences)} distinct {split} sentences found after {budget} draws")
    return sentences
