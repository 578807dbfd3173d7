"""The silence-timer baseline on a clip built from synthesized speech and silences of known length."""

import numpy as np
import pytest
from eval_clips import spoken_conversation

from sonare.eval.turns import (
    END_OF_TURN,
    HOLD,
    Pause,
    VadTimerDetector,
    best_operating_point,
    evaluate_detector,
)

HOLD_SECONDS = 0.35
END_SECONDS = 1.5


@pytest.fixture(scope="module")
def conversation() -> tuple[np.ndarray, int, list[Pause]]:
    """Speech, a short hold pause, speech, a long end-of-turn pause, speech, a final pause."""
    phrases = ["I would like to book a table", "for two people tonight.", "Sure, what time?"]
    gaps = [(HOLD_SECONDS, HOLD), (END_SECONDS, END_OF_TURN), (END_SECONDS, END_OF_TURN)]
    return spoken_conversation(phrases, gaps)


@pytest.fixture(scope="module")
def curve(conversation):
    detector = VadTimerDetector(timers_ms=[100, 300, 600, 1000, 2000])
    return evaluate_detector(detector, [conversation])


def test_short_timers_cut_off_the_hold_pause_long_ones_do_not(curve):
    # 300 ms fires only after the 350 ms hold ended (VAD release time): still a cut-off.
    assert curve[100.0].false_cutoffs == 1 and curve[300.0].false_cutoffs == 1
    assert curve[600.0].false_cutoffs == 0 and curve[1000.0].false_cutoffs == 0


def test_latency_follows_the_timer_and_too_long_timers_miss(curve):
    for timer_ms in (600.0, 1000.0):
        metrics = curve[timer_ms]
        assert metrics.misses == 0
        # The timer itself plus the VAD's release time, within a few 32 ms frames.
        assert timer_ms / 1000 <= metrics.latency_p50 <= timer_ms / 1000 + 0.35
        assert metrics.fires_in_speech == 0
    assert curve[2000.0].misses == 2


def test_best_operating_point_is_the_shortest_timer_without_cutoffs(curve):
    assert best_operating_point(curve, max_false_cutoff=0.0) == 600.0
