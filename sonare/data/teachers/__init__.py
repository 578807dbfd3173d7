"""Teacher engines: open TTS systems whose speech the Sonare models are trained on.

Every engine has the same shape (`Teacher`): a name, a native sample rate, a list of voices, and
`synthesize(text, voice, rate)` returning an `Utterance`. Phone timings, when the engine reports
them, are in the engine's own phone labels (IPA strings for Piper and espeak-ng, an IPA rendering
of flite's phone set); `sonare.data.align` maps them onto the shared `sonare.text` phonemes, or
aligns the audio when an engine reports nothing.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Timing:
    """A labelled span of an utterance, in seconds from its start."""

    label: str
    start: float
    end: float


@dataclass
class Utterance:
    audio: np.ndarray  # float32 mono
    sample_rate: int
    phones: list[Timing] | None
    words: list[Timing] | None

    @property
    def duration(self) -> float:
        return len(self.audio) / self.sample_rate


class Teacher(Protocol):
    name: str
    sample_rate: int

    def voices(self) -> list[str]: ...

    def synthesize(self, text: str, voice: str, rate: float = 1.0) -> Utterance: ...


# name -> "module:class"; modules are imported on demand so an engine that is not installed only
# fails when it is asked for.
_ENGINES = {
    "piper": "sonare.data.teachers.piper:PiperTeacher",
    "espeak": "sonare.data.teachers.espeak:EspeakTeacher",
    "flite": "sonare.data.teachers.flite:FliteTeacher",
    "festival": "sonare.data.teachers.festival:FestivalTeacher",
    "kokoro": "sonare.data.teachers.kokoro:KokoroTeacher",
}

_instances: dict[str, Teacher] = {}


def teacher_names() -> list[str]:
    return list(_ENGINES)


def get_teacher(name: str) -> Teacher:
    """The engine called `name`, created once per process (engines hold loaded models)."""
    if name not in _instances:
        if name not in _ENGINES:
            raise ValueError(f"unknown teacher {name!r}; known: {', '.join(_ENGINES)}")
        module_name, class_name = _ENGINES[name].split(":")
        _instances[name] = getattr(importlib.import_module(module_name), class_name)()
    return _instances[name]
