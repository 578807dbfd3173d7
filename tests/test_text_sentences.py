"""Training sentence generator: deterministic, de-duplicated, varied, with a disjoint held-out split."""

import re

import pytest

from sonare.text.sentences import canonical, generate_sentences, lone_words, split_of


def test_deterministic_and_extendable() -> None:
    first = generate_sentences(500, seed=7)
    assert first == generate_sentences(500, seed=7)
    assert generate_sentences(800, seed=7)[:500] == first
    assert first != generate_sentences(500, seed=8)


def test_distinct_after_canonicalisation() -> None:
    sentences = generate_sentences(20_000, seed=1)
    assert len(sentences) == 20_000
    assert len({canonical(s) for s in sentences}) == 20_000


def test_held_out_split_is_disjoint_from_training() -> None:
    train = generate_sentences(5000, seed=2)
    heldout = generate_sentences(300, seed=2, split="heldout")
    assert all(split_of(s) == "train" for s in train)
    assert all(split_of(s) == "heldout" for s in heldout)
    assert not {canonical(s) for s in train} & {canonical(s) for s in heldout}
    # a different seed still never puts a held-out sentence into training
    assert not set(generate_sentences(5000, seed=3)) & set(heldout)


def test_split_depends_only_on_the_sentence() -> None:
    assert split_of("Hello there, friend.") == split_of("hello   there friend")
    share = sum(split_of(f"Sentence number {i}.") == "heldout" for i in range(20_000)) / 20_000
    assert 0.01 < share < 0.03


def test_variety() -> None:
    sentences = generate_sentences(5000, seed=4)
    assert sum(s.endswith("?") for s in sentences) > 200
    assert sum(len(s.split()) <= 3 for s in sentences) > 100
    assert sum(len(s.split()) >= 20 for s in sentences) > 100
    assert sum(bool(re.search(r"\d", s)) for s in sentences) > 1000
    assert sum(s.startswith(("Um,", "Uh,", "So,", "Well,")) for s in sentences) > 50
    assert any("$" in s for s in sentences) and any("@" in s for s in sentences)
    vocabulary = {w.strip(".,?!;:\"'").lower() for s in sentences for w in s.split()}
    assert len(vocabulary) > 6000


def test_answers_are_lone_values_with_the_same_split() -> None:
    from sonare.text import normalize

    answers = generate_sentences(3000, seed=5, style="answers")
    assert answers == generate_sentences(3000, seed=5, style="answers")
    lengths = [len(normalize(a).split()) for a in answers]
    # one value each: a word or a name, a number or a date read out, never a sentence around it
    assert max(lengths) <= 16 and sum(n == 1 for n in lengths) > 500 and sum(n <= 3 for n in lengths) > 1500
    assert {"Tuesday.", "March."} <= set(answers)
    heldout = generate_sentences(100, seed=5, split="heldout", style="answers")
    assert all(split_of(a) == "heldout" for a in heldout) and not set(heldout) & set(answers)


def test_words_are_lone_content_words_with_the_same_split() -> None:
    words = generate_sentences(3000, seed=5, style="words")
    assert words == generate_sentences(3000, seed=5, style="words")
    # one word each, capitalised and closed, never a function word said alone
    assert all(re.fullmatch(r"[A-Z][a-z]{2,}\.", w) for w in words)
    assert not {"The.", "And.", "Which."} & set(words)
    heldout = generate_sentences(100, seed=5, split="heldout", style="words")
    assert all(split_of(w) == "heldout" for w in heldout) and not set(heldout) & set(words)


def test_lone_words_skip_names_function_words_and_joined_words() -> None:
    sentence = "Anna said the well-known cat sat on a mat, and the cat's tail twitched."
    assert lone_words(sentence) == ["cat", "sat", "mat", "tail", "twitched"]


def test_bad_split_or_style_rejected() -> None:
    with pytest.raises(ValueError):
        generate_sentences(10, split="test")
    with pytest.raises(ValueError):
        generate_sentences(10, style="poems")
