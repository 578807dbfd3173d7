"""The systems under evaluation, by name: synthesizers (TTS), transcribers (STT) and turn detectors.

The evaluation code only sees the small interfaces below, so a new system (Sonare's own TTS, STT
and turn head) joins an evaluation by adding one entry to a table here, without touching the
evaluation code. Factories import their engines lazily: naming an engine that is not installed
fails only when it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Literal, Protocol

# Type-only imports keep this table cheap to import for the command line's choices.
if TYPE_CHECKING:
    import numpy as np

    from sonare.eval.turns import TurnDetector

# Beam width for transcribers that search (Whisper's own evaluation setting).
DEFAULT_BEAM_SIZE = 5


class StreamingSynthesizer(Protocol):
    """Text in, audio chunks out (float32 mono at `sample_rate`), as soon as each is ready."""

    sample_rate: int

    def stream(self, text: str) -> Iterator[np.ndarray]: ...


class Transcriber(Protocol):
    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str: ...


class TeacherSynthesizer:
    """A teacher engine seen as a synthesizer. Teachers return a whole utterance, so the stream is
    one chunk and time to first audio equals the synthesis time of the sentence."""

    def __init__(self, engine: str, voice: str | None = None) -> None:
        from sonare.data.teachers import get_teacher

        self._teacher = get_teacher(engine)
        self.voice = voice or self._teacher.voices()[0]
        self.sample_rate = self._teacher.sample_rate

    def stream(self, text: str) -> Iterator[np.ndarray]:
        utterance = self._teacher.synthesize(text, self.voice)
        if utterance.sample_rate != self.sample_rate:
            raise RuntimeError(f"teacher returned {utterance.sample_rate} Hz, declared {self.sample_rate}")
        yield utterance.audio


class SonareSynthesizer:
    """Sonare's own TTS. `words=True` feeds the text one word at a time, as an LLM streams it, to measure
    what piecewise input costs against whole sentences. SONARE_TTS_DIR selects weights other than the bundled."""

    def __init__(self, voice: str | None, words: bool = False) -> None:
        import os

        from sonare.tts import load_default
        from sonare.tts.messages import SynthesisOptions, VoiceSpec

        self._model = load_default(os.environ.get("SONARE_TTS_DIR"))
        self._options = SynthesisOptions(VoiceSpec(id=voice))
        self._words = words
        self.sample_rate = self._model.sample_rate

    def stream(self, text: str) -> Iterator[np.ndarray]:
        from sonare.tts.messages import AudioChunk

        pieces = [w + " " for w in text.split()] if self._words else [text]
        for event in self._model.stream(pieces, self._options):
            if isinstance(event, AudioChunk):
                yield event.pcm


def _teacher(engine: str) -> Callable[[str | None], StreamingSynthesizer]:
    return lambda voice: TeacherSynthesizer(engine, voice)


def _whisper(name: str) -> Callable[[int], Transcriber]:
    def load(beam_size: int) -> Transcriber:
        from sonare.eval.asr import WhisperTranscriber

        return WhisperTranscriber(name, beam_size=beam_size)

    return load


def _sonare_transcriber(language_model: bool) -> Callable[[int], Transcriber]:
    def load(beam_size: int) -> Transcriber:
        from sonare.stt.evaluation import SonareTranscriber

        return SonareTranscriber(language_model)

    return load


def _sonare_turns(event: Literal["end", "eager_end"]) -> Callable[[], TurnDetector]:
    def load() -> TurnDetector:
        from sonare.stt.evaluation import SonareTurnDetector

        return SonareTurnDetector(event=event)

    return load


def _vad_timer() -> TurnDetector:
    from sonare.eval.turns import VadTimerDetector

    return VadTimerDetector()


# name -> factory(voice or None for the engine's first voice)
SYNTHESIZERS: dict[str, Callable[[str | None], StreamingSynthesizer]] = {
    "piper": _teacher("piper"),
    "espeak": _teacher("espeak"),
    "flite": _teacher("flite"),
    "sonare": lambda voice: SonareSynthesizer(voice),
    "sonare-words": lambda voice: SonareSynthesizer(voice, words=True),
}

# name -> factory(beam size, for decoders that search; others ignore it)
TRANSCRIBERS: dict[str, Callable[[int], Transcriber]] = {
    "whisper-tiny": _whisper("whisper-tiny"),
    "whisper-base": _whisper("whisper-base"),
    "sonare": _sonare_transcriber(language_model=True),
    "sonare-greedy": _sonare_transcriber(language_model=False),
}

# name -> factory()
TURN_DETECTORS: dict[str, Callable[[], TurnDetector]] = {
    "vad-timer": _vad_timer,
    "sonare": _sonare_turns("end"),
    "sonare-eager": _sonare_turns("eager_end"),  # the eager ends a client may act on speculatively
}


def _lookup(table: dict[str, Callable], kind: str, name: str) -> Callable:
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(table)}")
    return table[name]


def load_synthesizer(name: str, voice: str | None = None) -> StreamingSynthesizer:
    return _lookup(SYNTHESIZERS, "synthesizer", name)(voice)


def load_transcriber(name: str, beam_size: int) -> Transcriber:
    return _lookup(TRANSCRIBERS, "transcriber", name)(beam_size)


def load_turn_detector(name: str) -> TurnDetector:
    return _lookup(TURN_DETECTORS, "turn detector", name)()
