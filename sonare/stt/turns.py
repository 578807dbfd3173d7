"""Turn events from the turn head's per-frame probabilities, with hysteresis.

A turn starts when speech (speech probability >= the speech threshold) has been heard for START_FRAMES frames
in a row. Inside a turn the end-of-turn probability is compared with two thresholds: crossing the lower one
gives an eager end (a client may start preparing its reply), the higher one ends the turn. Speech after an eager
end, before the end, resumes the turn. The words weigh in on both, through a language model's probability that the
words so far end a sentence (`SentenceEndTiers`): under `sentence_end_min` the head must be surer than
`unsure_end` (the last word is one the model does not know, a name or letters still being spelled, or a digit of
a number that may go on), and under `unfinished_min` surer than `unfinished_end` (after "and", "the", a filler),
since a speaker who stops mid-sentence is most likely thinking. A silence longer than the maximum (MAX_SILENCE_SECONDS
unless a client sets it) ends a turn whatever the head says, so a stream never stays in a turn forever on a
low-confidence pause. A client's settings (`TurnSettings`) replace the thresholds and the maximum silence, at the
start of a stream or mid-stream, and may set a minimum level: quieter audio is silence whatever the head hears
(a client's endpointing floor, so that distant talk or a television does not hold a turn open).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from sonare.stt.messages import TurnSettings
from sonare.stt.model import FRAME_SECONDS, TURN_END, TURN_SPEECH, frame_time

if TYPE_CHECKING:
    from sonare.stt.beam import BeamDecoder
    from sonare.stt.decode import GreedyDecoder

SPEECH_THRESHOLD = 0.5
START_FRAMES = 2  # 80 ms of speech
EAGER_THRESHOLD = 0.5
END_THRESHOLD = 0.8
MAX_SILENCE_SECONDS = 4.0
# End thresholds an evaluation sweeps: each is one operating point on the false cut-off / latency curve. The
# head is often very sure of itself on hold pauses, so the sweep goes on in finer steps close to 1 (0.92 and 0.94:
# session 35's heads crossed the cut-off budget and the latency target both between 0.9 and 0.95).
THRESHOLDS = tuple(
    sorted({round(float(t), 2) for t in np.arange(0.3, 0.99, 0.05)} | {0.92, 0.94, 0.97, 0.98, 0.99, 0.995, 0.998})
)

Kind = Literal["start", "eager_end", "resume", "end"]


@dataclass(frozen=True)
class SentenceEndTiers:
    """How sure the head must be to end a turn, by how likely the words so far end a sentence. The defaults were
    chosen on held-back training conversations (docs/benchmarks.md, STT): the smallest sentence-end probability
    that kept every pause to think there (session 22), and how sure the head must be below it (the tier that
    detected the most ends within the budget on pauses to think: session 27, with session 28's 80 ms steps)."""

    sentence_end_min: float = 0.1
    unsure_end: float = 0.975
    unfinished_min: float = 0.03
    unfinished_end: float = 0.99

    def needed(self, sentence_end: float) -> float:
        """How sure the head must be on words this likely to end a sentence (over the end threshold)."""
        if sentence_end >= self.sentence_end_min:
            return 0.0
        return self.unsure_end if sentence_end >= self.unfinished_min else self.unfinished_end


DEFAULT_TIERS = SentenceEndTiers()


def sentence_end_tiers(unsure_end: float | None) -> SentenceEndTiers:
    """The default tiers, with a language model's own middle tier where it has one (`WordLM.unsure_end`)."""
    return DEFAULT_TIERS if unsure_end is None else replace(DEFAULT_TIERS, unsure_end=unsure_end)


@dataclass
class TurnTracker:
    eager_threshold: float = EAGER_THRESHOLD
    end_threshold: float = END_THRESHOLD
    speech_threshold: float = SPEECH_THRESHOLD
    max_silence_s: float = MAX_SILENCE_SECONDS
    min_level: float = 0.0  # RMS under which a frame is silence (a client's `min_volume`)
    tiers: SentenceEndTiers = DEFAULT_TIERS
    in_turn: bool = False
    eager: bool = False
    speech_run: int = 0
    silence_run: int = 0

    def push(
        self,
        p_end: float,
        p_speech: float,
        sentence_end: Callable[[], float] | None = None,
        level: float | None = None,
    ) -> Kind | None:
        """Feed one encoder frame's probabilities; returns the turn event it causes, if any. `sentence_end` gives
        the probability that the words so far end a sentence (asked only when the head alone would end the turn or
        give an eager end); `level` is the frame's RMS, for the minimum level (None: loud enough)."""
        speaking = p_speech >= self.speech_threshold and (level is None or level >= self.min_level)
        self.speech_run = self.speech_run + 1 if speaking else 0
        self.silence_run = 0 if speaking else self.silence_run + 1
        if not self.in_turn:
            if self.speech_run >= START_FRAMES:
                self.in_turn, self.eager = True, False
                return "start"
            return None
        ends = p_end >= self.end_threshold
        eager = not self.eager and p_end >= self.eager_threshold and not speaking
        # The words hold an eager end back as they hold the end: a hint the tracker would not act on is no hint.
        words_agree = (ends or eager) and (
            p_end >= self.tiers.unfinished_end or sentence_end is None or p_end >= self.tiers.needed(sentence_end())
        )
        if (ends and words_agree) or self.silence_run * FRAME_SECONDS >= self.max_silence_s:
            self.in_turn = self.eager = False
            return "end"
        if eager and words_agree:
            self.eager = True
            return "eager_end"
        if self.eager and self.speech_run >= START_FRAMES:
            self.eager = False
            return "resume"
        return None

    def configure(self, settings: TurnSettings) -> None:
        """Apply a client's settings (API thresholds bound P(the turn goes on): see `TurnSettings`)."""
        if settings.start_threshold is not None:
            self.speech_threshold = settings.start_threshold
        if settings.eager_end_threshold is not None:
            self.eager_threshold = 1.0 - settings.eager_end_threshold
        if settings.end_threshold is not None:
            self.end_threshold = 1.0 - settings.end_threshold
        if settings.end_timeout_s is not None:
            self.max_silence_s = settings.end_timeout_s
        if settings.min_volume is not None:
            self.min_level = settings.min_volume

    def close(self) -> bool:
        """The stream is being finalised or ended: True if a turn was open (and is now over)."""
        was, self.in_turn, self.eager = self.in_turn, False, False
        return was


# How much of its base step a stream gathers for its next step inside a turn (`step_after`; docs/benchmarks.md,
# "CPU inference", session 32). In a silence, where the end is decided, half (one encoder frame at the shipped
# 80 ms), so an end reaches the client soon after the head is sure of it. While the speaker talks the next word can
# wait (partials have a 250 ms budget), so a stream whose last step took at most FEW_ROWS streams gathers twice:
# nearly alone it pays a step's fixed cost by itself; stepped with more, that cost is shared and longer rows only
# pad the batch. Outside a turn, the base step.
PAUSED_STEPS = 0.5
SPEAKING_STEPS = 2.0
FEW_ROWS = 4


def step_after(base: float, tracker: TurnTracker | None, rows: int = 1) -> float:
    """Seconds of audio a stream with base step `base` gathers for its next step, once every frame it has heard
    has been fed to `tracker` (None: no turn detection, and base steps throughout; base 0: no gathering), its last
    step having taken `rows` streams together."""
    if tracker is None or not tracker.in_turn:
        return base
    if not tracker.speech_run:
        return base * PAUSED_STEPS
    return base * SPEAKING_STEPS if rows <= FEW_ROWS else base


def hear_frame(
    decoder: GreedyDecoder | BeamDecoder,
    tracker: TurnTracker | None,
    logp: np.ndarray,
    probs: np.ndarray | list[float],
    frame: int,
    level: float | None = None,
) -> Kind | None:
    """One encoder frame as a stream hears it: its R CTC frames' log-probabilities (R, V) into the decoder first,
    so that the tracker, fed the frame's turn probabilities (and its audio's RMS `level`) next, weighs the words up
    to this frame; returns the turn event, if any (the caller closes the decoder's segment at an end). No tracker:
    words only."""
    for j, row in enumerate(logp):
        decoder.push(row, frame * len(logp) + j)
    if tracker is None:
        return None
    return tracker.push(probs[TURN_END], probs[TURN_SPEECH], decoder.sentence_end_probability, level)


def turn_fires(
    probs: np.ndarray,
    eager_threshold: float,
    end_threshold: float,
    decoder: GreedyDecoder | BeamDecoder | None = None,
    logp: np.ndarray | None = None,
    *,
    step_seconds: float,
    tiers: SentenceEndTiers = DEFAULT_TIERS,
    event: Kind = "end",
) -> list[float]:
    """Times (seconds) a live client hears of each end of turn a tracker decides (or of each `event` of another
    kind, such as "eager_end"), fed one recording's per-frame sigmoid turn outputs (L, 2) and, with a decoder, its
    CTC log-probabilities (L·R, V) frame by frame as a stream is (`hear_frame`; a segment closes at each end), so
    that the words weigh in. Each event arrives at the end of the live step that heard its frame, the steps laid as
    a stream with base step `step_seconds` stepped alone lays them (`step_after`), for a client whose chunks divide
    its steps; at once with no gathering (0)."""
    tracker = TurnTracker(eager_threshold, end_threshold, tiers=tiers)
    per = len(logp) // len(probs) if decoder is not None and len(probs) else 0
    fires = []
    heard_at = 0.0  # the end of the step that hears the current frame
    for k, p in enumerate(probs):
        ready = frame_time(k)
        while heard_at < ready - 1e-9:  # steps of 0 (no gathering) hear each frame as it is ready
            heard_at += step_after(step_seconds, tracker) or ready - heard_at
        if decoder is None:
            kind = tracker.push(p[TURN_END], p[TURN_SPEECH])
        else:
            kind = hear_frame(decoder, tracker, logp[k * per : (k + 1) * per], p, k)
        if kind == event:
            fires.append(heard_at)
        if kind == "end" and decoder is not None:
            decoder.take_segment()
    return fires
