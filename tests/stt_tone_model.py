"""A small real streaming STT model for server tests: it "recognises" DTMF-like tones.

Digit d is a 20 ms-framed sine at 500 + 100 d Hz; a run of frames of one digit is a word ("three"),
silence separates words. It implements the engine's StreamingModel protocol with the real STT message
types: interim transcripts while a word is heard, finals on `Finalize`, at the end of audio, or (with
turn detection) when 200 ms of silence end a turn, with `start`/`eager_end`/`resume`/`end` turn events
and word timestamps. Loaded through `load_default()`, as the real `sonare.stt` is.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from sonare.ssm.state import BatchState
from sonare.stt.messages import (
    AudioIn,
    EndOfAudio,
    Finalize,
    Finalized,
    RecognitionOptions,
    Transcript,
    TurnConfig,
    TurnEvent,
    Word,
)

FRAME_SECONDS = 0.02
NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
EAGER_FRAMES, END_FRAMES = 5, 10  # silence that suggests / ends a turn
FRAMES_PER_STEP = 25


def digit_frequency(digit: int) -> float:
    return 500.0 + 100.0 * digit


def tone(digits: str, sample_rate: int, seconds: float = 0.2, gap: float = 0.1) -> np.ndarray:
    """Test audio: each digit as a tone, separated by silence."""
    parts = []
    for d in digits:
        t = np.arange(int(seconds * sample_rate)) / sample_rate
        parts += [0.5 * np.sin(2 * np.pi * digit_frequency(int(d)) * t), np.zeros(int(gap * sample_rate))]
    return np.concatenate(parts).astype(np.float32)


class ToneSession:
    def __init__(self, options: RecognitionOptions):
        self.options = options
        self.frame = round(options.sample_rate * FRAME_SECONDS)
        self.items: collections.deque[Any] = collections.deque()  # audio arrays and control markers
        self.buffer = np.zeros(0, dtype=np.float32)
        self.index = 0  # frames heard
        self.words: list[Word] = []  # heard since the last final
        self.current: tuple[int, int] | None = None  # (digit, first frame) of the word being heard
        self.segment_start = 0.0
        self.silent = 0
        self.in_turn = False
        self.eager = False
        self.done = False

    def push(self, item: Any) -> None:
        if isinstance(item, AudioIn):
            samples = np.asarray(item.samples, dtype=np.float32)
            if samples.ndim != 1:
                raise ValueError("audio must be mono")
            self.items.append(samples)
        elif isinstance(item, Finalize | EndOfAudio):
            self.items.append(item)
        elif isinstance(item, TurnConfig):
            return  # accepted; the tone model's turns follow fixed frame counts
        else:
            raise ValueError(f"unexpected input {type(item).__name__}")

    def _absorb(self) -> None:
        while self.items and isinstance(self.items[0], np.ndarray):
            self.buffer = np.concatenate([self.buffer, self.items.popleft()])

    def ready(self, now: float) -> bool:
        self._absorb()
        return len(self.buffer) >= self.frame or bool(self.items)

    def deadline(self) -> float | None:
        return None

    def finished(self) -> bool:
        return self.done


# The options of every stream opened, in order: what a route made of a client's parameters, for tests to read.
OPENED: list[RecognitionOptions] = []


class ToneRecognizer:
    name = "tone-stt"

    def new_state(self, slots: int) -> BatchState:
        return BatchState({"frames": torch.zeros(slots, dtype=torch.int64)})

    def open(self, options: Any) -> ToneSession:
        if not isinstance(options, RecognitionOptions):
            raise ValueError("expected RecognitionOptions")
        if options.language != "en":
            raise ValueError(f"language {options.language!r} is not supported")
        OPENED.append(options)
        return ToneSession(options)

    def step(self, state: BatchState, sessions: Sequence[ToneSession]) -> tuple[BatchState, list[list[Any]]]:
        frames = state["frames"].clone()
        events = []
        for row, s in enumerate(sessions):
            out: list[Any] = []
            s._absorb()
            for _ in range(FRAMES_PER_STEP):
                if len(s.buffer) < s.frame:
                    break
                chunk, s.buffer = s.buffer[: s.frame], s.buffer[s.frame :]
                self._frame(s, chunk, out)
                frames[row] += 1
            if len(s.buffer) < s.frame and s.items and not isinstance(s.items[0], np.ndarray):
                marker = s.items.popleft()
                self._final(s, out)
                if isinstance(marker, Finalize):
                    out.append(Finalized())
                else:
                    if s.in_turn and s.options.turn_detection:
                        out.append(TurnEvent("end", s.index * FRAME_SECONDS))
                    s.done = True
            events.append(out)
        return state.replace(frames=frames), events

    def _frame(self, s: ToneSession, chunk: np.ndarray, out: list[Any]) -> None:
        now = s.index * FRAME_SECONDS
        digit = self._digit(chunk, s.options.sample_rate)
        if digit is None:
            self._close_word(s)
            s.index += 1
            s.silent += 1
            if s.in_turn and s.options.turn_detection:
                if s.silent == EAGER_FRAMES:
                    s.eager = True
                    out.append(TurnEvent("eager_end", now))
                elif s.silent == END_FRAMES:
                    self._final(s, out)
                    out.append(TurnEvent("end", now))
                    s.in_turn = s.eager = False
            return
        s.index += 1
        s.silent = 0
        if s.options.turn_detection:
            if not s.in_turn:
                s.in_turn = True
                out.append(TurnEvent("start", now))
            elif s.eager:
                s.eager = False
                out.append(TurnEvent("resume", now))
        if s.current is None or s.current[0] != digit:
            self._close_word(s)
            s.current = (digit, s.index - 1)  # this frame
            heard = [w.word for w in s.words] + [NAMES[digit]]
            out.append(Transcript(" " + " ".join(heard), is_final=False, start=s.segment_start))

    @staticmethod
    def _digit(chunk: np.ndarray, rate: int) -> int | None:
        if np.sqrt(np.mean(chunk**2)) < 0.02:
            return None
        spectrum = np.abs(np.fft.rfft(chunk * np.hanning(len(chunk))))
        peak = np.argmax(spectrum) * rate / len(chunk)
        digit = round((peak - 500.0) / 100.0)
        return digit if 0 <= digit <= 9 and abs(peak - digit_frequency(digit)) < 50 else None

    @staticmethod
    def _close_word(s: ToneSession) -> None:
        if s.current is not None:
            digit, first = s.current
            s.words.append(Word(NAMES[digit], first * FRAME_SECONDS, s.index * FRAME_SECONDS))
            s.current = None

    def _final(self, s: ToneSession, out: list[Any]) -> None:
        self._close_word(s)
        now = s.index * FRAME_SECONDS
        if s.words:
            text = " " + " ".join(w.word for w in s.words)
            out.append(Transcript(text, True, list(s.words), s.segment_start, now - s.segment_start))
        s.words = []
        s.segment_start = now


def load_default(model_dir: Any = None) -> ToneRecognizer:
    return ToneRecognizer()
