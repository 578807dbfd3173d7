"""Streaming recognition: the STT model behind the engine's session interface.

Per stream, audio arrives in chunks of any size at the client's rate. `push` gathers it until a step's worth
(STEP_SECONDS; inside a turn sized by what the stream last heard) has come, then resamples it to 16 kHz and turns
it into log-mel frames (both stream exactly, whatever the chunking). Each engine step then, for every stream with
at least one whole 40 ms encoder frame queued,

  1. runs the subsampler and SSM encoder over all its queued frames (up to a share of STEP_FRAME_BUDGET), rows
     of different lengths batched together through the carried-state forward,
  2. decodes the CTC head into words (beam search with the word language model stored beside the weights,
     or greedily when there is none), emitting a partial transcript when the text changed,
  3. feeds the turn head, and the language model's view of whether the words so far end a sentence, to the
     turn tracker: start / eager_end / resume / end events, with the turn's final transcript (and word
     timestamps) just before `end`,
  4. honours a Finalize or the end of audio once every frame received before it has been encoded.

The stream's model context is one fixed-size state row (SSM states and two convolution rows); the host keeps
only audio not yet encoded and the words of the current, unfinished segment.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from sonare.audio.features import N_MELS, SAMPLE_RATE, StreamingFrames, frame_levels
from sonare.audio.resample import StreamingResampler
from sonare.ssm import BatchState
from sonare.stt.beam import BeamDecoder, BeamSettings
from sonare.stt.decode import GreedyDecoder
from sonare.stt.lm import WordLM
from sonare.stt.messages import (
    AudioIn,
    EndOfAudio,
    Finalize,
    Finalized,
    RecognitionOptions,
    Transcript,
    TurnConfig,
    TurnEvent,
)
from sonare.stt.model import SUBSAMPLING, STTModel, frame_time, heard_seconds
from sonare.stt.turns import DEFAULT_TIERS, SentenceEndTiers, TurnTracker, hear_frame, step_after

MIN_RATE, MAX_RATE = 8000, 48000
# Encoder frames one step may encode, all rows together (rows x longest row, since shorter rows are padded): a
# file sent at once is encoded over several steps, not in one stall, and a stream catching up shares the step
# with live ones. Alone, a stream takes 4 s of audio a step: each step pays a fixed cost of operator calls on a
# CPU, so longer steps run a file faster (docs/benchmarks.md, STT, session 19).
STEP_FRAME_BUDGET = 100
# Audio a stream gathers before it is heard (resampled, turned into features, encoded and decoded), its base step:
# every step pays a fixed cost of operator calls, so a client sending 20 ms chunks (pipecat does) would pay it for
# every 40 ms encoder frame. Gathering 80 ms halves the steps for less than a step more latency, about half a step
# on average after a word or an end of turn (docs/benchmarks.md, "CPU inference", session 28). Inside a turn the
# step follows what the stream last heard (`sonare.stt.turns.step_after`): half as long in a silence, so an end is
# heard sooner, twice as long while the speaker talks when a step takes few streams. A Finalize or the end of audio
# hears what is gathered at once. Servers set the base step (`ServerConfig.stt_step_ms`).
STEP_SECONDS = 0.08
LANGUAGES = ("en",)


@dataclass(frozen=True)
class _Mark:
    """A Finalize or the end of audio, placed after the log-mel frames received before it."""

    after_frames: int
    end: bool


class STTSession:
    def __init__(
        self,
        options: RecognitionOptions,
        decoder: GreedyDecoder | BeamDecoder,
        eager_threshold: float,
        end_threshold: float,
        step_seconds: float,
        tiers: SentenceEndTiers = DEFAULT_TIERS,
    ):
        self.options = options
        self.base_step = step_seconds
        self.step_samples = max(1, round(options.sample_rate * step_seconds))  # audio to gather for the next step
        self.unheard: list[np.ndarray] = []  # client audio gathered for the next step, at the client's rate
        self.resampler = StreamingResampler(options.sample_rate, SAMPLE_RATE)
        self.features = StreamingFrames()
        # Each log-mel frame's RMS, measured only for a stream opened with a minimum level (`min_volume`).
        self.levels = StreamingFrames(frame_levels) if options.turn.min_volume is not None else None
        self.queued: collections.deque[np.ndarray] = collections.deque()  # log-mel frames not yet encoded
        self.queued_levels: collections.deque[np.ndarray] = collections.deque()  # their RMS levels, if measured
        self.n_queued = 0
        self.frames_received = 0  # log-mel frames ever produced
        self.frames_encoded = 0  # log-mel frames ever encoded (a multiple of SUBSAMPLING)
        self.marks: collections.deque[_Mark] = collections.deque()
        self.decoder = decoder
        self.turns = TurnTracker(eager_threshold, end_threshold, tiers=tiers)
        self.turns.configure(options.turn)
        self.segment_start = 0.0
        self.partial = ""
        self.ended = False

    # -- inputs (engine thread) -------------------------------------------------------------------------

    def push(self, item: Any) -> None:
        if self.marks and self.marks[-1].end:
            raise ValueError("input after the end of audio")
        if isinstance(item, AudioIn):
            samples = np.asarray(item.samples, dtype=np.float32)
            if samples.ndim != 1:
                raise ValueError("audio must be mono")
            self.unheard.append(samples)
            if sum(map(len, self.unheard)) >= self.step_samples:
                self._hear_gathered()
        elif isinstance(item, TurnConfig):
            if item.settings.min_volume is not None and self.levels is None:
                raise ValueError("min_volume is set when a stream opens")
            self.turns.configure(item.settings)
        elif isinstance(item, Finalize):
            self._hear_gathered()
            self.marks.append(_Mark(self.frames_received, end=False))
        elif isinstance(item, EndOfAudio):
            self._hear_gathered()
            self._hear(self.resampler.flush())
            self.marks.append(_Mark(self.frames_received, end=True))
        else:
            raise ValueError(f"unsupported input {type(item).__name__}")

    def _hear_gathered(self) -> None:
        if self.unheard:
            samples = np.concatenate(self.unheard)
            self.unheard.clear()
            self._hear(self.resampler.process(samples))

    def _hear(self, samples: np.ndarray) -> None:
        frames = self.features.push(samples).numpy()
        if self.levels is not None:
            self.queued_levels.append(self.levels.push(samples).numpy())
        if len(frames):
            self.queued.append(frames)
            self.n_queued += len(frames)
            self.frames_received += len(frames)

    def plan_next_step(self, rows: int) -> None:
        """Size the next step by what the stream has heard so far, its last step having taken `rows` streams
        (`step_after`)."""
        tracker = self.turns if self.options.turn_detection else None
        self.step_samples = max(1, round(self.options.sample_rate * step_after(self.base_step, tracker, rows)))

    def encodable_frames(self) -> int:
        """How many log-mel rows the next step may encode: whole encoder frames, up to the step cap, never past
        the next mark, so a Finalize's transcript holds exactly the audio received before it."""
        limit = self.marks[0].after_frames - self.frames_encoded if self.marks else self.n_queued
        return min(self.n_queued, limit) // SUBSAMPLING * SUBSAMPLING if limit > 0 else 0

    def take_frames(self, max_frames: int) -> tuple[np.ndarray, list[float | None]]:
        """The log-mel rows for the next step, at most `max_frames` encoder frames (a multiple of SUBSAMPLING),
        and each encoder frame's RMS level (None where the stream measures none)."""
        n = min(self.encodable_frames(), max_frames * SUBSAMPLING)
        joined = np.concatenate(self.queued) if self.queued else np.zeros((0, N_MELS), np.float32)
        self.queued.clear()
        if n < len(joined):
            self.queued.append(joined[n:])
        self.n_queued -= n
        self.frames_encoded += n
        if self.levels is None:
            return joined[:n], [None] * (n // SUBSAMPLING)
        levels = np.concatenate(self.queued_levels)
        self.queued_levels.clear()
        if n < len(levels):
            self.queued_levels.append(levels[n:])
        return joined[:n], np.sqrt(np.square(levels[:n]).reshape(-1, SUBSAMPLING).mean(1)).tolist()

    def encodable(self) -> bool:
        return self.encodable_frames() > 0

    def mark_due(self) -> bool:
        """The next mark's audio has been encoded (all but a sub-frame remainder the model cannot take)."""
        return bool(self.marks) and self.frames_encoded >= self.marks[0].after_frames - (SUBSAMPLING - 1)

    # -- engine-facing ------------------------------------------------------------------------------------

    def ready(self, now: float) -> bool:
        return self.encodable() or self.mark_due()

    def deadline(self) -> float | None:
        return None  # paced by the client's audio, not by playback

    def finished(self) -> bool:
        return self.ended


class STTStreamingModel:
    """The engine's view of the STT model (name "stt")."""

    name = "stt"

    def __init__(
        self,
        model: STTModel,
        eager_threshold: float,
        end_threshold: float,
        lm: WordLM | None = None,
        beam: BeamSettings | None = None,
        step_seconds: float = STEP_SECONDS,
        tiers: SentenceEndTiers = DEFAULT_TIERS,
    ):
        if step_seconds < 0:
            raise ValueError("step_seconds must not be negative")
        self.model = model.eval()
        self.step_seconds = step_seconds
        self.eager_threshold = eager_threshold
        self.end_threshold = end_threshold
        self.lm = lm
        self.beam = beam or BeamSettings()
        self.tiers = tiers  # the sentence-end check's tiers for this model's head

    def new_state(self, slots: int) -> BatchState:
        return self.model.new_state(slots)

    def open(self, options: Mapping[str, Any] | RecognitionOptions) -> STTSession:
        if not isinstance(options, RecognitionOptions):
            raise ValueError("STT streams take RecognitionOptions")
        if not MIN_RATE <= options.sample_rate <= MAX_RATE:
            raise ValueError(f"sample_rate must be between {MIN_RATE} and {MAX_RATE} Hz")
        if options.language not in LANGUAGES:
            raise ValueError(f"language {options.language!r} is not supported (supported: {', '.join(LANGUAGES)})")
        return STTSession(
            options,
            self.new_decoder(options.keyterms),
            self.eager_threshold,
            self.end_threshold,
            self.step_seconds,
            self.tiers,
        )

    def new_decoder(self, keyterms: Sequence[str] = ()) -> GreedyDecoder | BeamDecoder:
        """A stream's decoder: the beam search with the word language model (favouring `keyterms`), or greedy
        without one (which has no word scores to boost)."""
        seconds = self.model.cfg.ctc_frame_seconds
        return BeamDecoder(self.lm, self.beam, seconds, keyterms) if self.lm is not None else GreedyDecoder(seconds)

    # -- one batched step --------------------------------------------------------------------------------

    @torch.inference_mode()
    def step(self, state: BatchState, sessions: Sequence[STTSession]) -> tuple[BatchState, list[list[Any]]]:
        events: list[list[Any]] = [[] for _ in sessions]
        rows = [i for i, s in enumerate(sessions) if s.encodable()]
        if rows:
            share = max(1, STEP_FRAME_BUDGET // len(rows))
            frames, levels = zip(*(sessions[i].take_frames(share) for i in rows), strict=True)
            lengths = torch.tensor([len(f) // SUBSAMPLING for f in frames])
            mel = torch.zeros(len(rows), int(lengths.max()) * SUBSAMPLING, N_MELS)
            for r, f in enumerate(frames):
                mel[r, : len(f)] = torch.from_numpy(f)
            if len(rows) == len(sessions):  # every row advances: the new state replaces the whole batch
                ctc, turn, state = self.model(mel, state, lengths)
            else:
                idx = torch.tensor(rows)
                ctc, turn, new = self.model(mel, state.gather(idx), lengths)
                state.scatter_(idx, new)
            per = self.model.cfg.ctc_per_frame
            logp = torch.log_softmax(ctc, -1).numpy()  # (rows, L·R, V)
            probs = torch.sigmoid(turn).tolist()
            for r, i in enumerate(rows):
                s = sessions[i]
                first = s.frames_encoded // SUBSAMPLING - int(lengths[r])
                for k in range(int(lengths[r])):
                    self._frame(s, logp[r, k * per : (k + 1) * per], probs[r][k], levels[r][k], first + k, events[i])
                self._emit_partial(s, events[i])
                s.plan_next_step(len(rows))
        for i, s in enumerate(sessions):
            while s.mark_due():
                self._settle_mark(s, s.marks.popleft(), events[i])
        return state, events

    def _frame(
        self, s: STTSession, logp: np.ndarray, probs: list[float], level: float | None, frame: int, out: list[Any]
    ) -> None:
        """Encoder frame `frame`: its R CTC frames' log-probabilities (R, V), its turn probabilities and its RMS."""
        kind = hear_frame(s.decoder, s.turns if s.options.turn_detection else None, logp, probs, frame, level)
        if kind is None:
            return
        now = frame_time(frame)
        if kind == "end":
            self._final(s, now, out)
        out.append(TurnEvent(kind, round(now, 3)))

    @staticmethod
    def _emit_partial(s: STTSession, out: list[Any]) -> None:
        text = s.decoder.text()
        if text != s.partial:
            s.partial = text
            words = list(s.decoder.words)
            out.append(
                Transcript(
                    text, False, words, s.segment_start, round(heard_seconds(s.frames_encoded) - s.segment_start, 3)
                )
            )

    @staticmethod
    def _final(s: STTSession, now: float, out: list[Any]) -> None:
        """Close the current segment with a final transcript (none when nothing was said)."""
        words = s.decoder.take_segment()
        if words:
            text = "".join(" " + w.word for w in words)
            out.append(Transcript(text, True, words, s.segment_start, round(now - s.segment_start, 3)))
        s.segment_start = now
        s.partial = ""

    def _settle_mark(self, s: STTSession, mark: _Mark, out: list[Any]) -> None:
        now = heard_seconds(s.frames_encoded)
        self._final(s, now, out)
        if mark.end:
            if s.options.turn_detection and s.turns.close():
                out.append(TurnEvent("end", round(now, 3)))
            s.ended = True
        else:
            out.append(Finalized())

    # -- offline use -------------------------------------------------------------------------------------

    def stream(self, chunks: Iterable[np.ndarray], options: RecognitionOptions) -> Iterator[Any]:
        """Events for audio arriving in `chunks`, stepping one stream without the engine (CLI, evaluation)."""
        session = self.open(options)
        state = self.new_state(1)
        for chunk in chunks:
            session.push(AudioIn(chunk))
            while session.ready(0.0):
                state, (events,) = self.step(state, [session])
                yield from events
        session.push(EndOfAudio())
        while not session.finished():
            state, (events,) = self.step(state, [session])
            yield from events

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        """The whole recording's transcript (turn detection off: one final at the end)."""
        options = RecognitionOptions(sample_rate=sample_rate, turn_detection=False)
        finals = [e.text for e in self.stream([audio], options) if isinstance(e, Transcript) and e.is_final]
        return "".join(finals).strip()
