"""The streaming synthesis session: pieces in, audio out, flush, timestamps, speed, volume, and the engine."""

import asyncio
import itertools

import numpy as np
import pytest
import torch
from tts_model import FRAMES_PER_ID, small_tts

from sonare.engine import Engine, EngineFull
from sonare.tts.acoustic import HOP
from sonare.tts.messages import (
    AudioChunk,
    EndOfInput,
    Flush,
    FlushDone,
    SynthesisOptions,
    TextPiece,
    VoiceSpec,
    WordTimestamps,
)

TEXT = "Hello there, my friend. It is a fine day."


@pytest.fixture(scope="module")
def tts():
    return small_tts()


def run(tts, pieces, **options):
    events = list(tts.stream(pieces, SynthesisOptions(VoiceSpec(id="a"), word_timestamps=True, **options)))
    audio = np.concatenate([e.pcm for e in events if isinstance(e, AudioChunk)])
    stamps = [e for e in events if isinstance(e, WordTimestamps)]
    return audio, stamps


def test_fragments_split_mid_word_give_the_same_audio_as_word_pieces(tts):
    words, _ = run(tts, ["Hello ", "there, ", "my ", "friend."])
    fragments, _ = run(tts, ["Hel", "lo th", "ere, m", "y fri", "end."])
    assert words.shape == fragments.shape and np.allclose(words, fragments, atol=1e-4)


def test_word_timestamps_follow_the_words_in_order(tts):
    audio, stamps = run(tts, [TEXT])
    words = [w for s in stamps for w in s.words]
    starts = [t for s in stamps for t in s.start]
    ends = [t for s in stamps for t in s.end]
    assert words == ["Hello", "there,", "my", "friend.", "It", "is", "a", "fine", "day."]
    assert starts == sorted(starts) and all(e > s for s, e in zip(starts, ends, strict=True))
    assert ends[-1] <= len(audio) / 22050


def test_audio_length_follows_durations_and_speed(tts):
    audio, _ = run(tts, [TEXT])
    slow, _ = run(tts, [TEXT], speed=0.5)
    fast, _ = run(tts, [TEXT], speed=2.0)
    frames = round(len(audio) / HOP)
    assert frames % FRAMES_PER_ID <= 1  # every id lasts 3 frames (plus the vocoder's final half grain)
    assert abs(len(slow) / len(audio) - 2.0) < 0.1
    assert abs(len(fast) / len(audio) - 0.5) < 0.1


def test_volume_scales_the_waveform(tts):
    loud, _ = run(tts, [TEXT])
    quiet, _ = run(tts, [TEXT], volume=0.5)
    unclipped = np.abs(loud) < 0.99
    assert unclipped.mean() > 0.5
    assert np.allclose(quiet[unclipped], loud[unclipped] * 0.5, atol=1e-6)


def test_flush_reports_after_the_audio_before_it_and_the_stream_goes_on(tts):
    with torch.inference_mode():
        session = tts.open(SynthesisOptions(VoiceSpec(id="a")))
        state = tts.new_state(1)
        session.push(TextPiece("Hello there"))
        session.push(Flush(7))
        events = []
        while session.marks:
            state, (out,) = tts.step(state, [session])
            events += out
        flushed = [i for i, e in enumerate(events) if isinstance(e, FlushDone)]
        assert len(flushed) == 1 and events[flushed[0]].flush_id == 7
        before = sum(len(e.pcm) for e in events if isinstance(e, AudioChunk))
        assert before >= 8 * FRAMES_PER_ID * HOP  # "hello there" is at least 8 ids, all spoken before the flush
        session.push(TextPiece("and more."))
        session.push(EndOfInput())
        while not session.finished():
            state, (out,) = tts.step(state, [session])
            events += out
        assert sum(len(e.pcm) for e in events if isinstance(e, AudioChunk)) > before


def test_bad_options_are_refused_at_open(tts):
    for options in (
        SynthesisOptions(VoiceSpec(id="nobody")),
        SynthesisOptions(VoiceSpec(id="a"), speed=3.0),
        SynthesisOptions(VoiceSpec(embedding=(0.1, 0.2))),
    ):
        with pytest.raises(ValueError):
            tts.open(options)


def test_engine_streams_in_parallel_equal_each_stream_alone(tts):
    texts = ["Good morning.", "Your order ships today, and it arrives on Friday.", "Yes.", TEXT]
    alone = [run(tts, [t])[0] for t in texts]

    async def main():
        engine = Engine({"tts": tts}, slots=4, threads=1)
        engine.start()
        try:
            streams = [engine.open("tts", SynthesisOptions(VoiceSpec(id="a"))) for _ in texts]
            with pytest.raises(EngineFull):
                engine.open("tts", SynthesisOptions(VoiceSpec(id="a")))
            for stream, text in zip(streams, texts, strict=True):
                stream.push(TextPiece(text))
                await asyncio.sleep(0.005)  # streams join while others are already speaking
                stream.push(EndOfInput())

            async def collect(stream):
                return np.concatenate([e.pcm async for e in stream if isinstance(e, AudioChunk)])

            return await asyncio.gather(*(collect(s) for s in streams))
        finally:
            engine.stop()

    together = asyncio.run(main())
    for a, b in zip(alone, together, strict=True):
        # float32 matmuls round differently at other batch sizes (the engine itself is exact, test_engine.py), and
        # a frame whose voicing probability sits at the 0.5 decision can then flip: a few frames may differ.
        assert a.shape == b.shape
        assert np.mean(np.abs(a - b) > 5e-3) < 0.05 and np.corrcoef(a, b)[0, 1] > 0.99


def test_steps_ramp_up_and_the_encoder_runs_just_in_time(tts):
    """The first step emits FIRST_STEP_FRAMES, later steps at most what was emitted so far, up to
    FRAMES_PER_STEP; a long text is encoded a slice at a time, only while few frames are queued."""
    from sonare.tts.stream import ENCODE_AHEAD_FRAMES, FIRST_STEP_FRAMES, FRAMES_PER_STEP, MAX_IDS_PER_STEP

    text = " ".join([TEXT] * 6)
    with torch.inference_mode():
        session, state = tts.open(SynthesisOptions(VoiceSpec(id="a"))), tts.new_state(1)
        session.push(TextPiece(text))
        session.push(EndOfInput())
        sizes, queued_ids = [], []
        while not session.finished() and len(sizes) < 8:
            state, (events,) = tts.step(state, [session])
            sizes += [len(e.pcm) // HOP for e in events if isinstance(e, AudioChunk)]
            queued_ids.append(len(session.ids))
    assert sizes[:4] == [FIRST_STEP_FRAMES, FIRST_STEP_FRAMES, 2 * FIRST_STEP_FRAMES, FRAMES_PER_STEP]
    assert all(n == FRAMES_PER_STEP for n in sizes[3:])
    assert queued_ids[0] > 0  # most of the text waits, unencoded
    assert all(a - b <= MAX_IDS_PER_STEP for a, b in itertools.pairwise(queued_ids))  # a slice per step
    assert len(session.frames) <= ENCODE_AHEAD_FRAMES + MAX_IDS_PER_STEP * FRAMES_PER_ID


def test_the_audio_does_not_depend_on_how_steps_are_sized(tts, monkeypatch):
    """Ramped steps and just-in-time encoding change when frames are computed, not what they are (up to float32
    rounding: the scans run over differently sized pieces)."""
    import sonare.tts.stream as stream

    ramped, _ = run(tts, [" ".join([TEXT] * 3)])
    monkeypatch.setattr(stream, "FIRST_STEP_FRAMES", stream.FRAMES_PER_STEP)
    monkeypatch.setattr(stream, "MAX_IDS_PER_STEP", 1000)
    monkeypatch.setattr(stream, "ENCODE_AHEAD_FRAMES", 10**6)
    whole, _ = run(tts, [" ".join([TEXT] * 3)])
    assert ramped.shape == whole.shape and np.abs(ramped - whole).max() < 5e-3
    assert np.corrcoef(ramped, whole)[0, 1] > 0.9999
