"""The STT model's streaming paths, its alphabet, and the turn labels and tracker."""

import numpy as np
import pytest
import torch

from sonare.stt.dataset import END_RAMP_SECONDS, turn_labels
from sonare.stt.model import STTConfig, STTModel, frame_time
from sonare.stt.turns import TurnTracker, step_after, turn_fires
from sonare.stt.vocab import BLANK, decode, encode, spoken_text

SMALL = STTConfig(channels=8, d_model=32, n_layers=2, d_state=8, head_dim=16, dropout=0.0)


@pytest.fixture(scope="module")
def model() -> STTModel:
    torch.manual_seed(0)
    return STTModel(SMALL).double().eval()


def test_streamed_pieces_equal_the_whole(model):
    mel = torch.randn(2, 64, 80, dtype=torch.float64)
    with torch.no_grad():
        ctc, turn, final = model(mel)
        state, outs, turns = model.new_state(2).to(torch.float64), [], []
        for lo, hi in [(0, 4), (4, 16), (16, 20), (20, 24), (24, 64)]:  # single frames take the step path
            c, t, state = model(mel[:, lo:hi], state)
            outs.append(c)
            turns.append(t)
    torch.testing.assert_close(torch.cat(outs, 1), ctc, atol=1e-10, rtol=0)
    torch.testing.assert_close(torch.cat(turns, 1), turn, atol=1e-10, rtol=0)
    for name in final:
        torch.testing.assert_close(state[name], final[name], atol=1e-10, rtol=0)


def test_padded_rows_keep_their_own_state(model):
    mel = torch.randn(2, 32, 80, dtype=torch.float64)
    with torch.no_grad():
        _, _, short = model(mel[1:, :12])  # row 1 alone, 3 encoder frames
        _, _, batched = model(mel, lengths=torch.tensor([8, 3]))
    for name in short:
        torch.testing.assert_close(batched[name][1:], short[name], atol=1e-10, rtol=0)


def test_rejects_partial_encoder_frames(model):
    with pytest.raises(ValueError, match="multiple of 4"):
        model(torch.zeros(1, 6, 80, dtype=torch.float64))


def test_state_size_is_fixed(model):
    state = model.new_state(1).to(torch.float64)
    before = {k: v.shape for k, v in state.items()}
    with torch.no_grad():
        for _ in range(3):
            _, _, state = model(torch.randn(1, 400, 80, dtype=torch.float64), state)
    assert {k: v.shape for k, v in state.items()} == before


def test_alphabet_round_trip():
    assert spoken_text("Hello, World!  It's—fine/ok") == "hello world it's fine ok"
    ids = encode("Don't stop.")
    assert ids is not None and BLANK not in ids
    assert decode(ids) == "don't stop"
    assert encode("route 66") is None  # digits must be spelled out before they are targets


def test_turn_labels_from_words_and_pauses():
    words = [{"word": "hi", "start": 0.2, "end": 0.6}, {"word": "there", "start": 1.4, "end": 1.8}]
    pauses = [{"start": 0.6, "end": 1.4, "kind": "hold"}, {"start": 1.8, "end": 3.0, "kind": "end_of_turn"}]
    speech, end = turn_labels(70, words, pauses)
    times = np.array([frame_time(k) for k in range(70)])
    assert np.isnan(end[times < 0.2]).all()  # before the first word: no turn to end
    assert (speech[(times > 0.3) & (times < 0.55)] == 1).all()
    assert (end[(times > 0.7) & (times < 1.35)] == 0).all()  # a hold pause
    ramp = end[(times >= 1.8) & (times < 3.0)]
    assert ramp[0] < 0.5 and (np.diff(ramp) >= 0).all()
    assert (end[times >= 1.8 + END_RAMP_SECONDS][: int((3.0 - 2.0) / 0.04)] == 1).all()

    # A hold after a complete sentence sounds like an end until the speaker goes on: it is labelled as one.
    pauses[0]["after_sentence"] = True
    _, end = turn_labels(70, words, pauses)
    assert end[(times >= 0.6) & (times < 1.35)][0] < 0.5
    assert (end[(times >= 0.6 + END_RAMP_SECONDS) & (times < 1.35)] == 1).all()


def test_tracker_events_follow_the_probabilities():
    tracker = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    frames = [(0.0, 0.9)] * 3 + [(0.6, 0.1)] + [(0.1, 0.9)] * 2 + [(0.6, 0.1), (0.9, 0.1)]
    assert [tracker.push(e, s) for e, s in frames] == [
        None, "start", None, "eager_end", None, "resume", "eager_end", "end"
    ]  # fmt: skip
    assert not tracker.close()


def test_an_unfinished_sentence_holds_the_end_until_the_head_is_very_sure():
    from sonare.stt.turns import DEFAULT_TIERS as tiers

    frames = [(0.0, 0.9)] * 3 + [(0.9, 0.1), (tiers.unsure_end, 0.1), (tiers.unfinished_end, 0.1)]
    asked = []

    def unfinished() -> float:  # "... and": the language model sees no sentence end
        asked.append(True)
        return tiers.unfinished_min / 2

    held = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    assert [held.push(e, s, unfinished) for e, s in frames] == [None, "start", None, None, None, "end"]
    assert len(asked) == 2  # asked only when the head alone would have ended the turn (or given an eager end)
    finished = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    assert [finished.push(e, s, lambda: tiers.sentence_end_min) for e, s in frames][3] == "end"
    # Words that may end a sentence (an unknown last word, a digit): the head must be surer, not very sure.
    unsure = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    assert [unsure.push(e, s, lambda: tiers.unfinished_min) for e, s in frames][3:5] == [None, "end"]


def test_the_words_hold_an_eager_end_back_as_they_hold_the_end():
    from sonare.stt.turns import DEFAULT_TIERS as tiers

    frames = [(0.0, 0.9)] * 3 + [(0.6, 0.1), (0.9, 0.1)]
    # words that end a sentence: the eager end comes at 0.6, ahead of the end
    sure = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    assert [sure.push(e, s, lambda: tiers.sentence_end_min) for e, s in frames][3:] == ["eager_end", "end"]
    # "... and": neither, until the head is very sure
    unfinished = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    assert [unfinished.push(e, s, lambda: 0.0) for e, s in frames][3:] == [None, None]
    assert unfinished.push(tiers.unfinished_end, 0.1, lambda: 0.0) == "end"


def test_client_settings_move_the_tracker_thresholds_in_the_api_direction():
    from sonare.stt.messages import TurnSettings

    frames = [(0.0, 0.9)] * 3 + [(0.65, 0.1)] * 3
    default = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    assert [default.push(e, s) for e, s in frames][-3:] == ["eager_end", None, None]
    # API end threshold 0.4 bounds P(the turn goes on): the turn ends once P(end) >= 0.6
    eager_client = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    eager_client.configure(TurnSettings(eager_end_threshold=0.5, end_threshold=0.4))
    assert [eager_client.push(e, s) for e, s in frames][-3:] == ["end", None, None]
    # a speech threshold above the head's 0.9 never starts a turn; a short timeout ends one on silence alone
    strict = TurnTracker()
    strict.configure(TurnSettings(start_threshold=0.95))
    assert all(strict.push(e, s) is None for e, s in frames)
    timed = TurnTracker(eager_threshold=0.99, end_threshold=0.99)
    timed.configure(TurnSettings(end_timeout_s=0.08))
    assert [timed.push(e, s) for e, s in frames] == [None, "start", None, None, "end", None]
    # under a client's minimum level, what the head hears as speech is silence: no turn starts, and a quiet
    # stretch inside a turn runs the silence timer
    floor = TurnTracker()
    floor.configure(TurnSettings(min_volume=0.01))
    assert all(floor.push(0.0, 0.9, level=0.005) is None for _ in range(5))
    assert [floor.push(0.0, 0.9, level=0.1) for _ in range(2)] == [None, "start"]
    floor.configure(TurnSettings(end_timeout_s=0.08))
    assert [floor.push(0.0, 0.9, level=0.005) for _ in range(2)] == [None, "end"]


def test_turn_fires_at_each_end():
    probs = np.array([[0.0, 0.9]] * 3 + [[0.95, 0.0]] + [[0.0, 0.9]] * 3 + [[0.95, 0.0]])
    assert turn_fires(probs, 0.5, 0.8, step_seconds=0) == [frame_time(3), frame_time(7)]
    assert turn_fires(probs, 0.99, 0.99, step_seconds=0) == []


def test_turn_fires_at_each_eager_end_too_when_asked():
    speech, unsure, end = [0.0, 0.9], [0.6, 0.0], [0.95, 0.0]
    probs = np.array([speech] * 3 + [unsure, end] + [speech] * 3 + [unsure] + [speech] * 3)  # the second resumes
    assert turn_fires(probs, 0.5, 0.8, step_seconds=0) == [frame_time(4)]
    assert turn_fires(probs, 0.5, 0.8, step_seconds=0, event="eager_end") == [frame_time(3), frame_time(8)]


def test_a_stream_gathers_half_a_step_in_a_silence_and_twice_while_the_speaker_talks_nearly_alone():
    from sonare.stt.turns import FEW_ROWS

    tracker = TurnTracker()
    assert step_after(0.08, tracker) == 0.08  # outside a turn: the base step
    tracker.push(0.0, 0.9)
    tracker.push(0.0, 0.9)  # a turn starts
    assert step_after(0.08, tracker) == pytest.approx(0.16)  # the speaker talks, a stream stepped alone
    assert step_after(0.08, tracker, rows=FEW_ROWS + 1) == 0.08  # stepped with many: longer rows would pad
    tracker.push(0.1, 0.0)  # a silence inside it
    assert step_after(0.08, tracker) == pytest.approx(0.04)
    assert step_after(0.08, None) == 0.08  # no turn detection
    assert step_after(0.0, tracker) == 0.0  # no gathering


def test_a_live_client_hears_an_end_at_the_end_of_the_step_that_heard_its_frame():
    speech, pause, end = [0.0, 0.9], [0.1, 0.0], [0.95, 0.0]
    # frame k is ready at 0.055 + 0.04·k s; a lone stream's steps end at 0.08, 0.16 (the turn starts), 0.32 (160 ms
    # while the speaker talks), then 40 ms at a time in the silence: 0.36, 0.40, 0.44
    probs = np.array([speech] * 4 + [pause] * 5 + [end])
    assert frame_time(9) == pytest.approx(0.415)
    assert turn_fires(probs, 0.99, 0.9, step_seconds=0.08) == pytest.approx([0.44])  # 80 ms throughout: 0.48
    assert turn_fires(probs, 0.99, 0.9, step_seconds=0) == pytest.approx([0.415])
    # an end decided within the long step that heard the speech stop arrives when that step ends
    assert turn_fires(np.array([speech] * 4 + [end]), 0.99, 0.9, step_seconds=0.08) == pytest.approx([0.32])


def test_a_stricter_tier_holds_an_end_the_default_tiers_let_through():
    from sonare.stt.turns import DEFAULT_TIERS, SentenceEndTiers

    tracker = TurnTracker(eager_threshold=0.5, end_threshold=0.8)
    strict = TurnTracker(eager_threshold=0.5, end_threshold=0.8, tiers=SentenceEndTiers(sentence_end_min=0.5))
    frames = [(0.0, 0.9)] * 3 + [(0.9, 0.1)]

    def words() -> float:  # as likely to end a sentence as the default tiers need
        return DEFAULT_TIERS.sentence_end_min

    assert [tracker.push(e, s, words) for e, s in frames][-1] == "end"
    assert [strict.push(e, s, words) for e, s in frames][-1] is None  # held: under 0.5 the head must be surer
