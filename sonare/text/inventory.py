"""The shared symbol table: ids for TTS input and data manifests, the same for every model.

Layout: special ids first, then the punctuation tokens of `phonemes.PUNCTUATION`, then
PHONEME_SYMBOLS. The phoneme table was built once with `python -m sonare.text.inventory_build`
(pseudo-words in every espeak-ng language, ordered by how often each symbol came up) and is frozen:
new symbols may only be appended, so ids in trained models and manifests stay valid.

A phoneme missing from the table is encoded as the phonemes its tie bars join, when those are
known ("a͡ɪ͡ɚ" -> "a", "ɪ", "ɚ"), and as UNK otherwise; encoding never fails.
"""

from __future__ import annotations

from sonare.text.phonemes import PUNCTUATION, TIE, Word

PAD_ID = 0
BOS_ID = 1
EOS_ID = 2
UNK_ID = 3
SPACE_ID = 4  # word boundary
_SPECIAL = ("<pad>", "<bos>", "<eos>", "<unk>", " ")

PHONEME_SYMBOLS: tuple[str, ...] = (
    "ˈ",
    "ˌ",
    "e",
    "t",
    "l",
    "ə",
    "i",
    "ː",
    "a",
    "ɛ",
    "o",
    "s",
    "f",
    "d",
    "n",
    "u",
    "b",
    "k",
    "r",
    "j",
    "m",
    "ɡ",
    "ʃ",
    "ɪ",
    "æ",
    "h",
    "t͡ʃ",
    "v",
    "p",
    "z",
    "ʰ",
    "ɔ",
    "ɐ",
    "ɑ",
    "ɾ",
    "a͡ɪ",
    "w",
    "5",
    "y",
    "ɹ",
    "ʁ",
    "c",
    "ɯ",
    "ʈ",
    "ø",
    "œ̃",
    "ʔ",
    "ʊ",
    "1",
    "ŋ",
    "ʂ",
    "4",
    "ɜ",
    "e͡ɪ",
    "t͡s",
    "ʌ",
    "ɨ",
    "x",
    "2",
    "ʉ",
    "œ",
    "ɣ",
    "ɲ",
    "ð",
    "ɒ",
    "ɕ",
    "ɭ",
    "d͡ʒ",
    "6",
    "χ",
    "e͡i",
    "θ",
    "ʒ",
    "ʋ",
    "r̩",
    "q",
    "l̩",
    "ʲ",
    "β",
    "ə͡r",
    "aː͡ɪ",
    "ɟ",
    "ɚ",
    ".",
    "a͡ʊ",
    "o͡ɪ",
    "[",
    "ɔ͡ɪ",
    "õ",
    "ɑ͡u",
    "i͡ə",
    "t͡ɕ",
    "ẽ",
    "o͡u",
    "ʰ͡χ",
    "^",
    "d͡ʑ",
    "`",
    "ɫ",
    "a͡i",
    "ɖ",
    "ʎ",
    "ʑ",
    "ã",
    "ɵ",
    "t̪",
    "o͡ʊ",
    "p͡h",
    "u͡i",
    "e͡e",
    "ɒ̃",
    "ĩ",
    "i͡ɛ",
    "ä",
    "o̞",
    "ɔ̃",
    "ç",
    "e̞",
    "ɯ͡ᵝ",
    "a͡ɨ",
    "ɳ",
    "ʐ",
    "a͡u",
    ".͡h",
    "o͡n͡ɡ",
    "n̩",
    "ə͡ʊ",
    "ũ",
    "ɛ̃",
    "a͡a",
    "o͡e",
    "ɑ̃",
    "ɐ̯",
    "t͡h",
    "ə͡u",
    "t͡ɕ͡h",
    "s͡s",
    "ʊ͡ə",
    "r̝",
    "u͡o",
    "i͡ɑ",
    "ɨ̃",
    "i̪",
    "y͡u",
    "i͡n͡ɡ",
    "k͡h",
    "u͡n͡ɡ",
    "s̻",
    "n͡ɡ",
    "ʌ͡ʊ",
    "ʝ",
    "ɑ͡ə",
    "ɑː͡ɹ",
    "t͡s͡h",
    "o͡i",
    "o͡e͡n͡ɡ",
    "ɽ",
    "7",
    "i͡o͡u",
    "m̩",
    "i͡u",
    "e͡o͡i",
    "u͡e͡i",
    "#",
    "ʀ",
    "i͡ʊ",
    "ɛ͡ɪ",
    "j͡a",
    '"',
    "d͡z",
    "ə͡i",
    "n̪",
    "y͡ə",
    "e͡o",
    "ɯ͡ɪ",
    "ʕ",
    "ʔ͡u",
    "u͡a",
    "a͡a͡i",
    "o͡ə",
    "ə͡l",
    "u͡ə",
    "ə͡ɪ",
    "ʔ͡i",
    "y͡æ",
    "i͡e",
    "s̺",
    "ʔ͡e",
    "ɗ",
    "j͡u",
    "_͡h",
    "ɻ",
    "ɐ̃",
    "ɱ",
    "t͡s̺",
    "ʔ͡o",
    "ʔ͡y",
    "d̪",
    "ħ",
    "a͡n͡ɡ",
    "æ͡ʊ",
    "ε",
    "y͡ɛ",
    "ŋ̩",
    "ˤ",
    "ʈ͡ʂ",
    "u͡a͡i",
    "s̪",
    "t͡l",
    "+",
    "ʌ͡ɹ",
    "ʌ̃",
    "ᵻ",
    "ʌ͡ɪ",
    "e͡ɑ",
    "ɘ",
    "ɸ",
    "ʔ͡œ",
    "ɛ͡ə",
    "e͡n͡ɡ",
    "a͡a͡u",
    "ŋ̃",
    "ᵐ",
    "a͡a͡n͡ɡ",
    "e͡ʊ",
    "ʌ͡ʉ",
    "e͡ə",
    "ᵑ",
    "t͡s̻",
    "u͡ɪ",
    "ⁿ",
    "ɔ͡a",
    "ʏ",
    "e͡u",
    "ø͡y",
    "ũ",
    "ɔ͡ə",
    "ɴ",
    "i͡ɪ",
    "u͡e",
    "ɔː͡ɹ",
    "ɔ͡ø",
    "ʔ͡ʌ",
    "œ͡y",
    "ɛ͡ʊ",
    "e͡a",
    "y͡i",
    "ɑ͡ɪ",
    "Φ",
    "ø͡ə",
    "ʔ͡ɑ",
    "e͡y",
    "ᵝ",
    "æ͡i",
    "ɑ͡ʊ",
    "ø͡i",
    "ʉ͡ɪ",
    "i͡y",
    "i͡a",
    "ɐ̃͡ʊ̃",
    "a͡ɪ͡ə",
    "a͡ʊ̃",
    "y͡ʊ",
    "ɬ",
    "ɛ͡ɹ",
    "i̯",
    "r̝̊",
    "y͡ø",
    "ɪ̃",
    "ʊ͡ɐ",
    "æː͡ɪ",
    "ɔ͡ʊ",
    "ə͡ɹ",
    "ɪ͡ɹ",
    "a͡ɛ",
    "a͡ɪ̃",
    "i͡o",
    "y͡ɪ",
    "æ͡y",
    "ɔ͡ɨ",
    "ɖ͡ʐ",
    "ɜ͡ɪ",
    "ɤ",
    "ɪ͡u",
    "ʊ̃",
    "ʔ͡a",
    "a͡ɪ͡ɚ",
    "l͡l",
    "s͡x",
    "ɑ͡ɨ",
    "ə͡ɨ",
    "ɨ͡u",
    "ʉ͡ɹ",
    "ʊ͡ɪ",
    "ʍ",
    "ʰ͡ə",
)

SYMBOLS: tuple[str, ...] = _SPECIAL + PUNCTUATION + PHONEME_SYMBOLS
_PUNCTUATION_ID = {p: len(_SPECIAL) + i for i, p in enumerate(PUNCTUATION)}
_PHONEME_ID = {p: len(_SPECIAL) + len(PUNCTUATION) + i for i, p in enumerate(PHONEME_SYMBOLS)}


def vocab_size() -> int:
    return len(SYMBOLS)


def phoneme_ids(phoneme: str) -> list[int]:
    """Ids for one phoneme token (several when only its tied parts are known)."""
    known = _PHONEME_ID.get(phoneme)
    if known is not None:
        return [known]
    parts = [part for part in phoneme.split(TIE) if part]
    if len(parts) < 2:
        return [UNK_ID]
    return [i for part in parts for i in phoneme_ids(part)]


def token_ids(token: str) -> list[int]:
    """Ids for one token of a phoneme token sequence: a phoneme, the word break " ", or punctuation."""
    if token == " ":
        return [SPACE_ID]
    if token in _PUNCTUATION_ID:
        return [_PUNCTUATION_ID[token]]
    return phoneme_ids(token)


def encode(items: list[Word | str]) -> tuple[list[int], list[int]]:
    """Ids for phonemised text, and the index of the word each id belongs to (-1 for other tokens).

    The sequence is BOS, the words' phonemes with SPACE between neighbouring words (also across
    punctuation, as in writing: "hi, you" -> h a͡ɪ , SPACE j u), punctuation ids, then EOS. Word
    indices count the Word items in `items` from 0.
    """
    ids = [BOS_ID]
    owners = [-1]
    word_index = -1
    for item in items:
        if isinstance(item, Word):
            if word_index >= 0:
                ids.append(SPACE_ID)
                owners.append(-1)
            word_index += 1
            for phoneme in item.phonemes:
                for i in phoneme_ids(phoneme):
                    ids.append(i)
                    owners.append(word_index)
        else:
            for i in token_ids(item):
                ids.append(i)
                owners.append(-1)
    ids.append(EOS_ID)
    owners.append(-1)
    return ids, owners


def decode(ids: list[int]) -> list[str]:
    """The symbol of each id (for inspection and tests)."""
    return [SYMBOLS[i] if 0 <= i < len(SYMBOLS) else SYMBOLS[UNK_ID] for i in ids]
