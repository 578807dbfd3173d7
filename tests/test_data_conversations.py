import numpy as np

from sonare.data.conversations import END_OF_TURN, HOLD, plan_turn

SENTENCES = [
    "I went to the store and bought eggs, milk, bread, and butter.",
    "Could you send me the report before Friday?",
    "The weather was warm but windy.",
]


def test_turns_end_with_a_turn_end_and_holds_read_as_continuations():
    for seed in range(60):
        rng = np.random.default_rng(seed)
        segments = plan_turn(SENTENCES[seed % 3 : seed % 3 + 1], rng, hold_prob=1.0)
        kinds = [k for _, k in segments]
        assert kinds[-1] == END_OF_TURN and all(k == HOLD for k in kinds[:-1])
        assert len(segments) >= 2  # hold_prob 1: every turn holds at least once
        for text, kind in segments:
            assert text.endswith(",") if kind == HOLD else text[-1] in ".?!"


def test_hold_points_are_plausible():
    seen = set()
    for seed in range(200):
        segments = plan_turn([SENTENCES[0]], np.random.default_rng(seed), hold_prob=1.0)
        first = segments[0][0].rstrip(",").lower()
        last_word = first.split()[-1]
        if last_word in ("and", "but", "so", "because", "or", "then", "which"):
            seen.add("conjunction")
        elif "number is" in first or "code is" in first:
            seen.add("number")
            digits = {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
            assert all(w in digits for s, _ in segments[1:] for w in s.strip(",.").split())
        elif len(first.split()) == 1 or first in ("you know",):
            seen.add("filler")
        else:
            assert segments[0][0].endswith(",")
            seen.add("list")
    assert seen == {"conjunction", "number", "filler", "list"}


def test_sentences_of_one_turn_are_joined_by_holds():
    for seed in range(20):
        segments = plan_turn(SENTENCES[1:], np.random.default_rng(seed), hold_prob=0.0)
        assert segments == [(SENTENCES[1], HOLD), (SENTENCES[2], END_OF_TURN)]
    for seed in range(200):
        segments = plan_turn(SENTENCES[:2], np.random.default_rng(seed), hold_prob=1.0)
        if "number is" in segments[0][0] or "code is" in segments[0][0]:
            assert SENTENCES[1] not in [t for t, _ in segments]  # a number ends its turn
        else:
            assert segments[-1] == (SENTENCES[1], END_OF_TURN)


def test_plain_turn_without_hold():
    sentence = "Could you send me the report before Friday?"
    segments = plan_turn([sentence], np.random.default_rng(0), hold_prob=0.0)
    assert segments == [(sentence, END_OF_TURN)]
