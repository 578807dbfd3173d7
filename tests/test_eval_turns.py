import math

import numpy as np
import pytest

from sonare.eval.turns import (
    END_OF_TURN,
    HOLD,
    VAD_FRAME_SECONDS,
    Pause,
    TurnOutcomes,
    best_operating_point,
    most_ends_within_budget,
    score_fires,
    silence_timer_fires,
    summarize,
    thinking_pause_cutoff_rate,
)

PAUSES = [
    Pause(1.0, 1.5, HOLD),
    Pause(3.0, 4.0, END_OF_TURN),
    Pause(6.0, 6.4, HOLD),
    Pause(8.0, 9.0, END_OF_TURN),
    Pause(11.0, 12.0, END_OF_TURN),
]


def test_perfect_detector_has_no_cutoffs_and_its_latency():
    metrics = summarize(score_fires(PAUSES, [3.2, 8.2, 11.2], audio_seconds=12.0))
    assert metrics.false_cutoffs == 0 and metrics.misses == 0 and metrics.fires_in_speech == 0
    assert metrics.latency_p50 == pytest.approx(0.2)


def test_hold_fires_are_cutoffs_missed_ends_and_speech_fires_are_counted():
    # 1.2 cuts a hold; 3.5 and 3.7 fire twice in one end pause: only the first counts; 5.0 is in
    # the speech that starts a turn; the 8.0-9.0 end is missed; 11.9 is late but in time.
    fires = [1.2, 3.5, 3.7, 5.0, 11.9]
    outcomes = score_fires(PAUSES, fires, audio_seconds=60.0)
    assert outcomes.hold_fired == [True, False]
    assert outcomes.end_latencies == [pytest.approx(0.5), None, pytest.approx(0.9)]
    metrics = summarize(outcomes)
    assert metrics.false_cutoff_rate == pytest.approx(0.5)
    assert metrics.miss_rate == pytest.approx(1 / 3)
    assert metrics.fires_in_speech == 1
    assert metrics.fires_in_speech_per_minute == pytest.approx(1.0)
    assert metrics.latency_p50 == pytest.approx(0.7)


def test_a_late_reaction_to_a_hold_is_still_a_cutoff():
    # Fires after the speaker resumed (6.6, 2.9) but before the next pause belong to the hold.
    outcomes = score_fires(PAUSES, [2.9, 6.6], audio_seconds=12.0)
    assert outcomes.hold_fired == [True, True] and outcomes.fires_in_speech == 0


def test_no_detections_gives_nan_latency_not_an_error():
    metrics = summarize(score_fires(PAUSES, [], audio_seconds=12.0))
    assert metrics.misses == 3 and math.isnan(metrics.latency_p50)


def test_outcomes_pool_across_conversations():
    pooled = TurnOutcomes()
    pooled.extend(score_fires(PAUSES, [1.1], 12.0))
    pooled.extend(score_fires(PAUSES, [3.1], 12.0))
    metrics = summarize(pooled)
    assert (metrics.holds, metrics.false_cutoffs, metrics.ends, metrics.misses) == (4, 1, 6, 5)


def test_holds_are_also_scored_by_whether_a_sentence_precedes_them():
    pauses = [
        Pause(1.0, 1.5, HOLD, after_sentence=False),
        Pause(3.0, 4.0, HOLD, after_sentence=True),
        Pause(5.0, 5.5, HOLD, after_sentence=True),
        Pause(7.0, 7.4, HOLD),  # not labelled: counts only among all holds
        Pause(8.0, 9.0, END_OF_TURN),
    ]
    metrics = summarize(score_fires(pauses, [3.3, 7.2, 8.2], audio_seconds=10.0))
    assert metrics.false_cutoff_rate == pytest.approx(0.5)
    assert (metrics.mid_sentence_holds, metrics.mid_sentence_false_cutoff_rate) == (1, 0.0)
    assert (metrics.after_sentence_holds, metrics.after_sentence_false_cutoff_rate) == (2, 0.5)
    assert math.isnan(summarize(score_fires(PAUSES, [], 12.0)).mid_sentence_false_cutoff_rate)


def test_pause_validation():
    with pytest.raises(ValueError):
        Pause(1.0, 2.0, "maybe")
    with pytest.raises(ValueError):
        Pause(2.0, 1.0, HOLD)
    assert Pause.from_dict({"start": 1, "end": 2, "kind": "hold"}) == Pause(1.0, 2.0, HOLD)
    labelled = Pause.from_dict({"start": 1, "end": 2, "kind": "hold", "after_sentence": True})
    assert labelled == Pause(1.0, 2.0, HOLD, after_sentence=True)


def test_best_operating_point_respects_the_false_cutoff_budget():
    def metrics(cutoff_rate: float, p50: float, missed: int = 0):
        fired = [True] * round(cutoff_rate * 100) + [False] * round(100 - cutoff_rate * 100)
        outcomes = TurnOutcomes(hold_fired=fired, hold_after_sentence=[None] * len(fired))
        outcomes.end_latencies = [p50] * (4 - missed) + [None] * missed
        return summarize(outcomes)

    curve = {100.0: metrics(0.30, 0.15), 500.0: metrics(0.05, 0.55), 800.0: metrics(0.01, 0.85)}
    assert best_operating_point(curve, 0.05) == 500.0
    assert best_operating_point(curve, 0.01) == 800.0
    assert best_operating_point(curve, 0.0) is None
    # A setting that catches only a few ends, however quickly, has no median latency after a true end.
    curve[900.0] = metrics(0.0, 0.10, missed=2)
    assert best_operating_point(curve, 0.05) == 500.0 and best_operating_point(curve, 0.0) is None
    curve[950.0] = metrics(0.0, 0.95, missed=1)
    assert best_operating_point(curve, 0.0) == 950.0


def test_most_ends_within_budget_when_no_setting_detects_most():
    def metrics(cutoff_rate: float, p50: float, missed: int):
        fired = [True] * round(cutoff_rate * 100) + [False] * round(100 - cutoff_rate * 100)
        outcomes = TurnOutcomes(hold_fired=fired, hold_after_sentence=[None] * len(fired))
        outcomes.end_latencies = [p50] * (10 - missed) + [None] * missed
        return summarize(outcomes)

    # Words holding back unsure ends: every setting misses most of them, so none has a median latency.
    curve = {0.5: metrics(0.08, 0.2, 5), 0.7: metrics(0.04, 0.3, 6), 0.8: metrics(0.02, 0.25, 6)}
    curve[0.9] = metrics(0, 0, 10)
    assert best_operating_point(curve, 0.05) is None
    assert most_ends_within_budget(curve, 0.05) == 0.8  # 0.7 and 0.8 detect as many; 0.8 sooner
    assert most_ends_within_budget(curve, 0.1) == 0.5
    assert most_ends_within_budget(curve, 0.0) == 0.9  # nothing detected: within the budget all the same
    del curve[0.9]
    assert most_ends_within_budget(curve, 0.0) == 0.8  # none within it: the closest, 2% over


def test_thresholds_can_be_chosen_on_pauses_to_think():
    def metrics(mid_fired: int, after_fired: int, p50: float):
        fired = [True] * mid_fired + [False] * (20 - mid_fired) + [True] * after_fired + [False] * (10 - after_fired)
        outcomes = TurnOutcomes(hold_fired=fired, hold_after_sentence=[False] * 20 + [True] * 10)
        outcomes.end_latencies = [p50] * 4
        return summarize(outcomes)

    # A fast setting cuts off one pause to think in twenty and most holds after a complete sentence.
    curve = {0.9: metrics(1, 8, 0.3), 0.99: metrics(0, 1, 1.5)}
    assert best_operating_point(curve, 0.05) == 0.99  # on all holds only the slow setting is within 5%
    assert best_operating_point(curve, 0.05, thinking_pause_cutoff_rate) == 0.9
    unlabelled = summarize(TurnOutcomes(hold_fired=[True, False], hold_after_sentence=[None, None]))
    assert thinking_pause_cutoff_rate(unlabelled) == unlabelled.false_cutoff_rate == 0.5


def _frames(pattern: str) -> np.ndarray:
    """'S' speech, '.' silence, 'm' an in-between probability, one character per VAD frame."""
    return np.array([{"S": 0.9, ".": 0.05, "m": 0.45}[c] for c in pattern])


def test_silence_timer_fires_after_enough_silent_frames_and_rearms_on_speech():
    probabilities = _frames("..SSS......SS...SS..")
    fires = silence_timer_fires(probabilities, timer_seconds=3 * VAD_FRAME_SECONDS)
    # Silence from frame 5 -> fires at the end of frame 7; then frames 13-15 -> end of 15; then
    # only two silent frames at the end: no firing. Leading silence never fires (not armed).
    assert fires == pytest.approx([8 * VAD_FRAME_SECONDS, 16 * VAD_FRAME_SECONDS])


def test_silence_timer_hysteresis():
    # An in-between probability neither starts silence nor interrupts a silence already running.
    assert silence_timer_fires(_frames("SSmmmm"), 2 * VAD_FRAME_SECONDS) == []
    assert silence_timer_fires(_frames("SS.m.."), 3 * VAD_FRAME_SECONDS) == pytest.approx([5 * VAD_FRAME_SECONDS])
    # A single speech frame restarts the count.
    assert silence_timer_fires(_frames("SS..S.."), 3 * VAD_FRAME_SECONDS) == []


def test_longer_timers_fire_later_or_not_at_all():
    probabilities = _frames("SSSS" + "." * 10 + "SSSS" + "." * 30)
    # 0.1 s needs 4 silent frames of 32 ms, 0.5 s needs 16: the 10-frame gap only trips the short one.
    assert silence_timer_fires(probabilities, 0.1) == pytest.approx([8 * VAD_FRAME_SECONDS, 22 * VAD_FRAME_SECONDS])
    assert silence_timer_fires(probabilities, 0.5) == pytest.approx([34 * VAD_FRAME_SECONDS])
