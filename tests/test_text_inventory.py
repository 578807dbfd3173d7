"""The shared symbol inventory: stable layout, encoding with word indices, unknown symbols."""

import random

import pytest

from sonare.text.inventory import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    PHONEME_SYMBOLS,
    SPACE_ID,
    SYMBOLS,
    UNK_ID,
    decode,
    encode,
    token_ids,
    vocab_size,
)
from sonare.text.inventory_build import candidate_letters, sample_text
from sonare.text.phonemes import PUNCTUATION, Word, phonemize


def test_layout_is_fixed() -> None:
    assert (PAD_ID, BOS_ID, EOS_ID, UNK_ID, SPACE_ID) == (0, 1, 2, 3, 4)
    assert SYMBOLS[SPACE_ID] == " "
    assert len(set(PHONEME_SYMBOLS)) == len(PHONEME_SYMBOLS)
    assert vocab_size() == len(SYMBOLS) == 5 + len(PUNCTUATION) + len(PHONEME_SYMBOLS)
    # the first ids are what trained models were built with; new symbols may only be appended
    assert PHONEME_SYMBOLS[:6] == ("ˈ", "ˌ", "e", "t", "l", "ə")


def test_encode_round_trip_with_word_indices() -> None:
    items = phonemize("Hi, you!")
    ids, owners = encode(items)
    assert len(ids) == len(owners)
    assert decode(ids) == ["<bos>", "h", "ˈ", "a͡ɪ", ",", " ", "j", "u", "ː", "!", "<eos>"]
    assert owners == [-1, 0, 0, 0, -1, -1, 1, 1, 1, -1, -1]
    words = [i for i in items if isinstance(i, Word)]
    for index, word in enumerate(words):
        assert decode([i for i, o in zip(ids, owners, strict=True) if o == index]) == list(word.phonemes)


def test_unknown_symbols_never_fail() -> None:
    ids, owners = encode([Word("x", ("🙂", "ʍ͡q")), "¿"])
    # an unknown tied phoneme falls back to its known parts; anything else is UNK
    assert decode(ids) == ["<bos>", "<unk>", "ʍ", "q", "<unk>", "<eos>"]
    assert owners == [-1, 0, 0, 0, -1, -1]
    assert decode([10_000]) == ["<unk>"]


@pytest.mark.parametrize("language", ["en-us", "en-gb", "fr-fr", "de", "es", "ru", "cmn", "hi", "ar", "ja", "sw"])
def test_languages_are_covered(language: str) -> None:
    items = []
    for clause in sample_text(language, candidate_letters(), 120, random.Random(0)):
        items += phonemize(clause, language)
    ids, _ = encode(items)
    assert len(ids) > 300
    assert UNK_ID not in ids


def test_token_ids_for_manifest_tokens() -> None:
    # "." is both punctuation and a (Mandarin) phoneme symbol: as a token it is punctuation
    assert decode(token_ids(".")) == ["."]
    assert token_ids(" ") == [SPACE_ID]
    assert decode(token_ids("t͡ʃ")) == ["t͡ʃ"]
    assert token_ids("🙂") == [UNK_ID]
