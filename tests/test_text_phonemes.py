"""espeak-ng phonemiser: IPA tokens per word, word boundaries and punctuation, every language."""

import threading

import pytest

from sonare.text.phonemes import PUNCTUATION, Word, list_languages, phonemize, split_phonemes


def _phonemes(text: str, language: str = "en-us") -> list[tuple[str, ...]]:
    return [item.phonemes for item in phonemize(text, language) if isinstance(item, Word)]


@pytest.mark.parametrize(
    ("word", "phonemes"),
    [
        ("cat", ("k", "ˈ", "æ", "t")),
        ("hello", ("h", "ə", "l", "ˈ", "o͡ʊ")),
        ("church", ("t͡ʃ", "ˈ", "ɜ", "ː", "t͡ʃ")),
        ("judge", ("d͡ʒ", "ˈ", "ʌ", "d͡ʒ")),
        ("thing", ("θ", "ˈ", "ɪ", "ŋ")),
    ],
)
def test_known_english_words(word: str, phonemes: tuple[str, ...]) -> None:
    assert _phonemes(word) == [phonemes]


def test_word_boundaries_survive_words_espeak_joins() -> None:
    # espeak-ng phonemises "in the" and "of the" as single words; each written word keeps its own.
    items = phonemize("In the end of the day")
    assert [w.text for w in items] == ["In", "the", "end", "of", "the", "day"]
    assert all(isinstance(w, Word) and w.phonemes for w in items)
    the_before_vowel, the_before_consonant = items[1].phonemes, items[4].phonemes
    assert the_before_vowel[0] == the_before_consonant[0] == "ð"
    assert the_before_vowel != the_before_consonant  # context is kept: "ðɪ end" but "ðə day"


def test_word_espeak_expands_into_several_words_stays_one_word() -> None:
    # "42" becomes two phoneme words and "in the" one: the counts cancel out, the words must not shift
    items = phonemize("I have 42 cats in the house", "en-us")
    assert [w.text for w in items] == ["I", "have", "42", "cats", "in", "the", "house"]
    assert "".join(items[2].phonemes) == "fˈɔː͡ɹɾitˈuː"
    assert items[3].phonemes == ("k", "ˈ", "æ", "t", "s")
    assert items[4].phonemes == ("ɪ", "n")


def test_punctuation_is_kept_as_tokens() -> None:
    items = phonemize("Hello, world. Are you there? Yes! Well; maybe: no — fine...")
    punctuation = [i for i in items if isinstance(i, str)]
    assert punctuation == [",", ".", "?", "!", ";", ":", "—", "…"]
    assert set(punctuation) <= set(PUNCTUATION)


def test_punctuation_runs_collapse_to_the_strongest_and_leading_marks_drop() -> None:
    items = phonemize('"Really?!" he said -- (twice).')
    assert [i if isinstance(i, str) else i.text for i in items] == ["Really", "?", "he", "said", "—", "twice", "."]


def test_contractions_and_hyphenated_words_are_one_word() -> None:
    assert [w.text for w in phonemize("I don't know a well-known man")] == [
        "I", "don't", "know", "a", "well-known", "man",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("language", "text", "n_words"),
    [
        ("fr-fr", "Bonjour, comment allez-vous?", 3),
        ("de", "Guten Tag, wie geht es dir?", 6),
        ("es", "Hola, ¿cómo estás?", 3),
        ("ru", "Привет, как дела?", 3),
        ("hi", "नमस्ते, आप कैसे हैं?", 4),
        ("cmn", "你好，世界。", 2),
        ("ja", "こんにちは。", 1),
        ("ar", "مرحبا بالعالم.", 2),
    ],
)
def test_other_languages(language: str, text: str, n_words: int) -> None:
    words = _phonemes(text, language)
    assert len(words) == n_words
    assert all(words)


def test_languages_listed_and_unknown_language_rejected() -> None:
    languages = list_languages()
    assert len(languages) > 100
    assert {"en-us", "en-gb", "fr-fr", "de", "cmn", "hi", "sw"} <= set(languages)
    with pytest.raises(ValueError):
        phonemize("hello", "xx-nowhere")


def test_split_phonemes_rules() -> None:
    # ties join a phoneme (with its length mark), combining marks stay on their base, stress and
    # length are their own tokens, and espeak-ng's language-switch and liaison marks are dropped
    assert split_phonemes("t͡ʃˈɑː͡ɹɔ̃(͡f͡r)le-z") == ("t͡ʃ", "ˈ", "ɑː͡ɹ", "ɔ̃", "l", "e", "z")
    assert split_phonemes("tˈuː") == ("t", "ˈ", "u", "ː")


def test_concurrent_use_gives_the_same_phonemes() -> None:
    texts = [("The quick brown fox jumps.", "en-us"), ("Le renard brun saute.", "fr-fr")] * 4
    expected = [phonemize(t, lang) for t, lang in texts]
    results: list[object] = [None] * len(texts)

    def run(i: int) -> None:
        for _ in range(20):
            results[i] = phonemize(*texts[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected
