"""A small real streaming TTS model for server tests: each character becomes a 10 ms tone.

It implements the engine's StreamingModel protocol with the real TTS message types: text arrives in
pieces, a word is spoken once it is complete (followed by whitespace, a flush or the end), each word's
audio carries on the oscillator phase kept in the model's batched state, word timestamps come from the
durations, speed and volume apply, and output is paced to real time after a short lead, like a real
streaming model. Loaded by the server through `load_default()` / `builtin_voices()`, exactly as the
real `sonare.tts` is.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from sonare.ssm.state import BatchState
from sonare.tts.messages import (
    AudioChunk,
    EndOfInput,
    Flush,
    FlushDone,
    SynthesisOptions,
    TextPiece,
    WordTimestamps,
)

SAMPLE_RATE = 24000
CHAR_SECONDS = 0.01
LANGUAGES = ("en", "fr", "de", "es")
LEAD_SECONDS = 0.3  # how far output may run ahead of real time
CRASH_WORD = "__crash__"  # makes a step fail, to test the server's handling of model errors

VOICES = [
    {
        "id": "6f1d7a52-tone-alto",
        "name": "Alto",
        "description": "A mid-pitched test tone",
        "gender": "feminine",
        "language": "en",
        "embedding": [1.0, 0.0, 0.0, 0.0],
    },
    {
        "id": "0b9e4c11-tone-bass",
        "name": "Bass",
        "description": "A low-pitched test tone",
        "gender": "masculine",
        "language": "en",
        "embedding": [0.5, 0.0, 0.0, 0.0],
    },
]


def char_frequency(ch: str, pitch: float) -> float:
    return (300.0 + 25.0 * (ord(ch.lower()) % 32)) * pitch


class ToneSession:
    def __init__(self, options: SynthesisOptions):
        self.options = options
        self.pitch = float(options.voice.embedding[0]) if options.voice.embedding else 1.0
        self.partial = ""
        self.items: collections.deque[tuple[str, Any]] = collections.deque()
        self.closing = False
        self.started_at: float | None = None
        self.emitted = 0.0  # seconds of audio emitted (host copy of the state's clock, for pacing)

    def push(self, item: Any) -> None:
        if isinstance(item, TextPiece):
            if "\x00" in item.text:
                raise ValueError("text must not contain NUL characters")
            self.partial += item.text
            # words followed by whitespace are complete; the rest may continue in the next piece
            cut = max(self.partial.rfind(c) for c in " \t\n")
            if cut >= 0:
                self.items.extend(("word", w) for w in self.partial[:cut].split())
                self.partial = self.partial[cut + 1 :]
        elif isinstance(item, Flush | EndOfInput):
            self.items.extend(("word", w) for w in self.partial.split())
            self.partial = ""
            if isinstance(item, Flush):
                self.items.append(("flush", item.flush_id))
            else:
                self.closing = True
        else:
            raise ValueError(f"unexpected input {type(item).__name__}")

    def ready(self, now: float) -> bool:
        if not self.items:
            return False
        return self.started_at is None or self.emitted - (now - self.started_at) < LEAD_SECONDS

    def deadline(self) -> float | None:
        return None if self.started_at is None else self.started_at + self.emitted

    def finished(self) -> bool:
        return self.closing and not self.items and not self.partial


class ToneModel:
    name = "tone-tts"

    def new_state(self, slots: int) -> BatchState:
        return BatchState(
            {
                "phase": torch.zeros(slots, dtype=torch.float64),
                "clock": torch.zeros(slots, dtype=torch.float64),
            }
        )

    def open(self, options: Any) -> ToneSession:
        if not isinstance(options, SynthesisOptions):
            raise ValueError("expected SynthesisOptions")
        if options.language not in LANGUAGES:
            raise ValueError(f"language {options.language!r} is not supported (supported: {', '.join(LANGUAGES)})")
        if options.voice.embedding is not None and len(options.voice.embedding) != 4:
            raise ValueError("voice embeddings of this model have 4 values")
        return ToneSession(options)

    def step(self, state: BatchState, sessions: Sequence[ToneSession]) -> tuple[BatchState, list[list[Any]]]:
        phase, clock = state["phase"].clone(), state["clock"].clone()
        events: list[list[Any]] = []
        for row, session in enumerate(sessions):
            out: list[Any] = []
            while session.items and session.items[0][0] == "flush":
                out.append(FlushDone(session.items.popleft()[1]))
            if session.items:
                word = session.items.popleft()[1]
                if word == CRASH_WORD:
                    raise RuntimeError("the test model was asked to crash")
                pcm, phase[row] = self._speak(word, session, float(phase[row]))
                start = float(clock[row])
                out.append(AudioChunk(pcm, SAMPLE_RATE, start))
                clock[row] += len(pcm) / SAMPLE_RATE
                if session.options.word_timestamps:
                    spoken = len(word) * CHAR_SECONDS / session.options.speed
                    out.append(WordTimestamps([word], [round(start, 4)], [round(start + spoken, 4)]))
                if session.started_at is None:
                    session.started_at = time.monotonic()
                session.emitted = float(clock[row])
                while session.items and session.items[0][0] == "flush":
                    out.append(FlushDone(session.items.popleft()[1]))
            events.append(out)
        return state.replace(phase=phase, clock=clock), events

    def _speak(self, word: str, session: ToneSession, phase: float) -> tuple[np.ndarray, float]:
        """The word's tones then a one-character pause, continuing the oscillator's phase."""
        per_char = round(SAMPLE_RATE * CHAR_SECONDS / session.options.speed)
        freqs = np.repeat([char_frequency(c, session.pitch) for c in word] + [0.0], per_char)
        phases = phase + np.cumsum(2 * math.pi * freqs / SAMPLE_RATE)
        amplitude = np.where(freqs > 0, 0.4 * session.options.volume, 0.0)
        return (amplitude * np.sin(phases)).astype(np.float32), float(phases[-1] % (2 * math.pi))


def load_default(model_dir: Any = None) -> ToneModel:
    return ToneModel()


def builtin_voices(model_dir: Any = None) -> list[dict[str, Any]]:
    return [dict(v) for v in VOICES]
