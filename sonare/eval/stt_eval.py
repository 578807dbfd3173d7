"""STT evaluation: word error rate of a transcriber on labelled clips, clean and under added noise."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm

from sonare.eval.registry import Transcriber
from sonare.eval.wer import WordErrors, utterance_errors

# A listening condition: (audio, sample_rate, clip index) -> the audio and its rate as the
# recogniser hears it.
Condition = Callable[[np.ndarray, int, int], tuple[np.ndarray, int]]


def clean(audio: np.ndarray, sample_rate: int, index: int) -> tuple[np.ndarray, int]:
    return audio, sample_rate


def noisy(kind: str, snr_db: float, seed: int) -> Condition:
    """Noise of `kind` (see `sonare.data.augment.NOISE_KINDS`) at `snr_db` against the speech level,
    drawn from a per-clip seed so every transcriber hears the same noise. The augmenter mixes at
    16 kHz, so the clip is resampled to that first."""
    from sonare.audio.resample import resample
    from sonare.data.augment import SAMPLE_RATE, add_noise

    def apply(audio: np.ndarray, sample_rate: int, index: int) -> tuple[np.ndarray, int]:
        at_16k = resample(audio, sample_rate, SAMPLE_RATE)
        return add_noise(at_16k, kind, snr_db, seed + index), SAMPLE_RATE

    return apply


def reverberant(rt60: float, drr_db: float, seed: int) -> Condition:
    """The clip as a microphone across a room hears it: a synthetic room (`sonare.data.augment.add_reverb`) whose
    tail falls 60 dB in `rt60` seconds, the talker `drr_db` louder direct than reverberant; each clip its own
    room, drawn from a per-clip seed so every transcriber hears the same one."""
    from sonare.audio.resample import resample
    from sonare.data.augment import SAMPLE_RATE, add_reverb

    def apply(audio: np.ndarray, sample_rate: int, index: int) -> tuple[np.ndarray, int]:
        return add_reverb(resample(audio, sample_rate, SAMPLE_RATE), rt60, drr_db, seed + index), SAMPLE_RATE

    return apply


def phone(codec: str) -> Condition:
    """The clip as a telephone call delivers it: 300-3400 Hz at 8 kHz through G.711 `codec` ("mulaw", "alaw"),
    handed to the recogniser at 8 kHz, as a telephony client sends it."""
    from sonare.audio.resample import resample
    from sonare.data.augment import SAMPLE_RATE, TELEPHONE_RATE, narrowband

    def apply(audio: np.ndarray, sample_rate: int, index: int) -> tuple[np.ndarray, int]:
        return narrowband(resample(audio, sample_rate, SAMPLE_RATE), codec), TELEPHONE_RATE

    return apply


@dataclass(frozen=True)
class SttClip:
    id: str
    audio: np.ndarray
    sample_rate: int
    text: str
    group: str = ""  # e.g. the corpus section, for a per-voice-family breakdown


@dataclass
class SttReport:
    """Per condition: each clip's transcript and errors, and the time spent transcribing."""

    groups: list[str] = field(default_factory=list)  # one per clip
    transcripts: dict[str, list[str]] = field(default_factory=dict)
    errors: dict[str, list[WordErrors]] = field(default_factory=dict)
    compute_seconds: dict[str, float] = field(default_factory=dict)
    audio_seconds: float = 0.0

    def summary(self) -> dict[str, dict[str, float | int]]:
        """Corpus WER and counts per condition over all clips, with the real-time factor."""
        out = {}
        for name, errors in self.errors.items():
            total = sum(errors, WordErrors())
            out[name] = {
                **total.as_dict(),
                "clips": len(errors),
                "rtf": self.compute_seconds[name] / self.audio_seconds if self.audio_seconds else float("nan"),
            }
        return out

    def by_group(self) -> dict[str, dict[str, dict[str, float | int]]]:
        """Corpus WER and counts per condition and clip group."""
        out: dict[str, dict[str, dict[str, float | int]]] = {}
        for name, errors in self.errors.items():
            totals: dict[str, WordErrors] = {}
            counts: dict[str, int] = {}
            for group, clip_errors in zip(self.groups, errors, strict=True):
                totals[group] = totals.get(group, WordErrors()) + clip_errors
                counts[group] = counts.get(group, 0) + 1
            out[name] = {g: {**totals[g].as_dict(), "clips": counts[g]} for g in sorted(totals)}
        return out


def evaluate_stt(
    transcriber: Transcriber,
    clips: Sequence[SttClip],
    conditions: Mapping[str, Condition],
    show_progress: bool = False,
) -> SttReport:
    report = SttReport(groups=[c.group for c in clips], audio_seconds=sum(c.audio.size / c.sample_rate for c in clips))
    for name, condition in conditions.items():
        report.transcripts[name], report.errors[name] = [], []
        report.compute_seconds[name] = 0.0
        for index, clip in enumerate(tqdm(clips, desc=f"stt {name}", unit="clip", disable=not show_progress)):
            heard, rate = condition(clip.audio, clip.sample_rate, index)
            start = time.perf_counter()
            hypothesis = transcriber.transcribe(heard, rate)
            report.compute_seconds[name] += time.perf_counter() - start
            report.transcripts[name].append(hypothesis)
            report.errors[name].append(utterance_errors(clip.text, hypothesis))
    return report
