"""Find the phoneme symbols espeak-ng emits, to extend the frozen table in `inventory.py`.

Every language is fed pseudo-words spelled in the scripts it reads natively (random letter
strings exercise its letter-to-sound rules, and unpronounceable ones are spelled out with letter
names) and numbers. Symbols not yet in PHONEME_SYMBOLS are printed in a stable order; they must be
appended at the end of the table, never inserted, so ids of trained models stay valid.

    python -m sonare.text.inventory_build [--words 1500]
"""

from __future__ import annotations

import argparse
import random
import unicodedata
from collections import Counter

from sonare.text.phonemes import Word, _espeak, list_languages, phonemize

# Blocks that hold the letters of scripts espeak-ng reads (Latin to Myanmar/Georgian, Ethiopic,
# Cherokee, Khmer, Latin/Greek extended, kana, a slice of CJK ideographs and Hangul, Shavian).
_BLOCKS = (
    (0x0041, 0x10FF),
    (0x1200, 0x13FF),
    (0x1780, 0x17FF),
    (0x1E00, 0x1FFF),
    (0x3041, 0x30FF),
    (0x4E00, 0x5200),
    (0xAC00, 0xAE00),
    (0x10450, 0x1047F),
)


def candidate_letters() -> list[str]:
    """Letters and combining signs of the scripts espeak-ng might read."""
    return [
        chr(code)
        for start, end in _BLOCKS
        for code in range(start, end + 1)
        if unicodedata.category(chr(code)) in ("Lu", "Ll", "Lo", "Mn", "Mc")
    ]


def _reads_letter(engine, letter: str) -> bool:
    """Whether the current voice reads `letter` as a letter of its own language.

    A switch to another voice shows as "(lang)"; a letter the voice does not know comes out as
    "letter" and its code point, many more phonemes than a letter's name.
    """
    ipa = engine.to_ipa(letter)
    sounds = [ch for ch in ipa if ch not in "ˈˌ\u0361 "]
    return 0 < len(sounds) <= 12 and "(" not in ipa


def sample_text(language: str, letters: list[str], n_words: int, rng: random.Random) -> list[str]:
    """Numbers, and pseudo-words in the letters the language reads natively, in clauses of 12 words."""
    engine = _espeak()
    words: list[str] = []
    with engine.lock:
        engine.set_language(language)
        # Words draw on one Unicode block at a time, as real words do on one script.
        blocks: dict[int, list[str]] = {}
        for ch in letters:
            if _reads_letter(engine, ch):
                blocks.setdefault(ord(ch) // 128, []).append(ch)
        alphabets = list(blocks.values())
        while alphabets and len(words) < n_words:
            word = "".join(rng.choices(rng.choice(alphabets), k=rng.randint(1, 7)))
            if "(" not in engine.to_ipa(word):
                words.append(word)
    clauses = ["0 1 2 3 4 5 6 7 8 9 10 11 12 13 20 21 30 100 101 1000 2024 12345 1000000"]
    clauses += [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return clauses


def emitted_symbols(n_words: int, seed: int = 0) -> Counter[str]:
    """How often each phoneme token appears across all languages' sample text."""
    rng = random.Random(seed)
    letters = candidate_letters()
    counts: Counter[str] = Counter()
    for language in list_languages():
        for clause in sample_text(language, letters, n_words, rng):
            for item in phonemize(clause, language):
                if isinstance(item, Word):
                    counts.update(item.phonemes)
    return counts


def main() -> None:
    from sonare.text.inventory import PHONEME_SYMBOLS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=1500, help="pseudo-words per language")
    args = parser.parse_args()
    counts = emitted_symbols(args.words)
    known = set(PHONEME_SYMBOLS)
    new = sorted((s for s in counts if s not in known), key=lambda s: (-counts[s], s))
    print(f"{len(counts)} symbols emitted, {len(new)} not in PHONEME_SYMBOLS")
    print("(" + "".join(f"{s!r}, " for s in new) + ")")


if __name__ == "__main__":
    main()
