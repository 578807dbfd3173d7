"""What flows in and out of an STT stream: inputs the transport pushes, events the model emits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np


@dataclass(frozen=True)
class TurnSettings:
    """A client's turn-detection settings, in the API's terms; None keeps the model's tuned value.

    The API's eager-end and end thresholds bound the probability that the turn goes on (start > eager_end >
    end), the complement of what the turn head predicts: a turn ends once P(end) >= 1 - end_threshold.
    """

    start_threshold: float | None = None  # speech probability at which a frame counts as speech
    eager_end_threshold: float | None = None
    end_threshold: float | None = None
    end_timeout_s: float | None = None  # a silence this long ends the turn whatever the head says
    min_volume: float | None = None  # RMS level (full scale 1) under which audio counts as silence


@dataclass(frozen=True)
class RecognitionOptions:
    sample_rate: int = 16000  # of the audio the client sends, 8000-48000
    language: str = "en"
    turn_detection: bool = True  # emit TurnEvent and finalize turns on the model's end-of-turn decision
    turn: TurnSettings = field(default_factory=TurnSettings)
    keyterms: tuple[str, ...] = ()  # words and names to favour (a recall boost; with the language model only)


# -- inputs -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AudioIn:
    samples: np.ndarray  # float32 mono in [-1, 1] at the session's sample rate


@dataclass(frozen=True)
class Finalize:
    """The client asks for a final transcript of everything heard so far."""


@dataclass(frozen=True)
class TurnConfig:
    """New turn settings mid-session; they apply from the next frame."""

    settings: TurnSettings


@dataclass(frozen=True)
class EndOfAudio:
    """No more audio: finalize and end the stream."""


# -- events -------------------------------------------------------------------------------------------------


@dataclass
class Word:
    word: str
    start: float  # seconds from the start of the stream
    end: float


@dataclass
class Transcript:
    text: str
    is_final: bool
    words: list[Word] = field(default_factory=list)
    start: float = 0.0
    duration: float = 0.0


@dataclass(frozen=True)
class TurnEvent:
    """`start` when speech begins; `eager_end` when the turn has probably ended (act speculatively);
    `resume` if the speaker goes on after an eager end; `end` when the turn is over."""

    kind: Literal["start", "eager_end", "resume", "end"]
    time: float  # seconds from the start of the stream


@dataclass(frozen=True)
class Finalized:
    """Every final transcript for audio received before the Finalize has been emitted."""
