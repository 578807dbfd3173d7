import pytest

from sonare.eval.wer import WordErrors, align_words, corpus_errors, normalize_for_wer, utterance_errors


@pytest.mark.parametrize(
    ("reference", "hypothesis", "counts"),
    [
        # (substitutions, deletions, insertions, reference words)
        ("a b c", "a b c", (0, 0, 0, 3)),
        ("a b c", "a x c", (1, 0, 0, 3)),
        ("a b c", "a c", (0, 1, 0, 3)),
        ("a b c", "a b c d", (0, 0, 1, 3)),
        ("a b c", "", (0, 3, 0, 3)),
        ("", "a b", (0, 0, 2, 0)),
        ("", "", (0, 0, 0, 0)),
        ("a b c d", "b c d e", (0, 1, 1, 4)),  # a shift is one deletion and one insertion, not 4 subs
        ("a b", "x y z", (2, 0, 1, 2)),  # substitutions are preferred over delete + insert
        ("the cat sat on the mat", "the cat sat on mat", (0, 1, 0, 6)),
        # A closed compound matches its open spelling, either way round, and nothing else does.
        ("a spell book here", "a spellbook here", (0, 0, 0, 4)),
        ("the bellbottom pants", "the bell bottom pants", (0, 0, 0, 3)),
        ("the bellbottom pants", "the bell button pants", (1, 0, 1, 3)),
        ("go away now", "go a way now", (1, 0, 1, 3)),  # "a" is too short to be half of a compound
        ("spell book", "bookspell", (1, 1, 0, 2)),
    ],
)
def test_alignment_counts(reference, hypothesis, counts):
    errors = align_words(reference.split(), hypothesis.split())
    assert (errors.substitutions, errors.deletions, errors.insertions, errors.reference_words) == counts


def test_wer_is_errors_over_reference_words():
    assert WordErrors(1, 1, 1, 6).wer == pytest.approx(0.5)
    assert WordErrors(0, 0, 2, 0).wer == 2.0  # an empty reference counts as one word
    assert WordErrors().wer == 0.0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Hello, World!", "hello world"),
        ("It\u2019s a well-known fact.", "its a well known fact"),
        (
            "I can't and won't; they're sure we'll go.",
            "i can not and will not they are sure we will go",
        ),
        (
            "You cannot, I'm done, we've left, he'd stay.",
            "you can not i am done we have left hed stay",
        ),
        ('"Quoted" words (and brackets) -- dashes...', "quoted words and brackets dashes"),
        ("twenty-seven,three;four", "twenty seven three four"),
        ("  spaced\tout\nwords ", "spaced out words"),
        ("Um, I'd like, uh, hmm... the umbrella", "id like the umbrella"),
        ("Mm-hmm, erm, the ER is open", "the er is open"),
        ("The grey harbour, its colour", "the gray harbor its color"),
    ],
)
def test_normalisation(text, words):
    assert normalize_for_wer(text) == words.split()


def test_numbers_are_spelled_out_on_both_sides():
    assert utterance_errors("I have 2 cats.", "i have two cats").errors == 0
    assert utterance_errors("It costs twelve dollars", "It costs $12.").errors == 0


def test_contractions_compare_equal_to_their_expansions():
    assert utterance_errors("We don't know", "we do not know").errors == 0
    assert utterance_errors("It's late", "its late").errors == 0


def test_corpus_wer_weights_by_reference_length():
    pairs = [("a b c d e f g h i j", "a b c d e f g h i j"), ("a b", "x b")]
    total = corpus_errors(pairs)
    assert total.substitutions == 1 and total.reference_words == 12
    assert total.wer == pytest.approx(1 / 12)  # not the mean of per-utterance rates (0.25)
    assert total.as_dict()["wer"] == total.wer
