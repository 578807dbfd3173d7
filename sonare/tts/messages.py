"""What flows in and out of a TTS stream: inputs the transport pushes, events the model emits."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class VoiceSpec:
    """A voice by stored id, or directly by speaker embedding."""

    id: str | None = None
    embedding: tuple[float, ...] | None = None


@dataclass(frozen=True)
class SynthesisOptions:
    voice: VoiceSpec
    language: str = "en"
    speed: float = 1.0  # 0.5x-2x
    volume: float = 1.0  # linear gain, 0-2
    word_timestamps: bool = False


# -- inputs -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextPiece:
    """More text for the utterance; pieces may split anywhere, even inside a word."""

    text: str


@dataclass(frozen=True)
class Flush:
    """Speak everything buffered now, then report `FlushDone` with the same id."""

    flush_id: int


@dataclass(frozen=True)
class EndOfInput:
    """No more text: speak what is buffered, then end the stream."""


# -- events -------------------------------------------------------------------------------------------------


@dataclass
class AudioChunk:
    pcm: np.ndarray  # float32 mono in [-1, 1] at `sample_rate`
    sample_rate: int
    start: float  # seconds from the start of the stream


@dataclass
class WordTimestamps:
    words: list[str] = field(default_factory=list)
    start: list[float] = field(default_factory=list)  # seconds from the start of the stream
    end: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class FlushDone:
    flush_id: int
