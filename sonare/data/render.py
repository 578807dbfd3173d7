"""Rendering one planned item into audio on disk and a manifest record (runs in worker processes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sonare.audio.io import save_audio
from sonare.audio.resample import resample
from sonare.data.speakers import SpeakerTransform, apply_speaker_transform
from sonare.data.teachers import Timing, get_teacher
from sonare.data.timings import transfer_timings
from sonare.data.tokens import TokenizedText, tokenize

# An engine's own timings are trusted when nearly every phoneme has a counterpart in the engine's
# phones and most are the very same sound (accents change vowels, not the sequence); otherwise
# the utterance is aligned acoustically.
MIN_TRANSFER_COVERED = 0.9
MIN_TRANSFER_MATCH = 0.6
LEAD_SILENCE = 0.2
TAIL_SILENCE = 0.3
TARGET_RMS_DB = -20.0
PEAK_LIMIT = 0.97


def normalize_level(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """Scale so the speech (the louder half of 20 ms frames) sits at TARGET_RMS_DB, peak-limited."""
    frame = max(1, sample_rate // 50)
    n = len(audio) // frame
    if n == 0:
        return audio
    energy = (audio[: n * frame].reshape(n, frame) ** 2).mean(axis=1)
    loud = energy[energy >= np.median(energy)]
    rms = float(np.sqrt(loud.mean())) if loud.size else 0.0
    if rms <= 1e-8:
        return audio
    gain = 10 ** (TARGET_RMS_DB / 20) / rms
    peak = float(np.abs(audio).max()) * gain
    if peak > PEAK_LIMIT:
        gain *= PEAK_LIMIT / peak
    return (audio * gain).astype(np.float32)


def token_timings(
    audio: np.ndarray,
    sample_rate: int,
    phones: list[Timing] | None,
    text: TokenizedText,
    normalized: str,
    language: str,
) -> tuple[list[Timing], dict[str, Any]]:
    """Timings for every token: carried over from the engine when it reports them well, else aligned."""
    if phones:
        transfer = transfer_timings(phones, text.tokens)
        if transfer.covered >= MIN_TRANSFER_COVERED and transfer.matched >= MIN_TRANSFER_MATCH:
            quality = {"matched": round(transfer.matched, 3), "covered": round(transfer.covered, 3)}
            return transfer.timings, {"method": "engine", **quality}
    from sonare.data.align import align

    result = align(audio, sample_rate, text.tokens, normalized, language)
    return result.timings, {"method": "dtw", "cost": round(result.cost, 4)}


def word_spans(text: TokenizedText, timings: list[Timing]) -> list[dict[str, Any]]:
    return [
        {"word": word, "start": round(timings[a].start, 4), "end": round(timings[b - 1].end, 4)}
        for word, a, b in text.words
    ]


def phone_spans(timings: list[Timing]) -> list[dict[str, Any]]:
    return [{"phoneme": t.label, "start": round(t.start, 4), "end": round(t.end, 4)} for t in timings]


def trim_to_speech(audio: np.ndarray, sample_rate: int, timings: list[Timing]) -> tuple[np.ndarray, list[Timing]]:
    """Cut long leading/trailing silence, keeping a natural margin; timings shift to match."""
    if not timings:
        return audio, timings
    start = max(0.0, timings[0].start - LEAD_SILENCE)
    end = min(len(audio) / sample_rate, timings[-1].end + TAIL_SILENCE)
    a, b = int(start * sample_rate), int(np.ceil(end * sample_rate))
    shifted = [Timing(t.label, max(0.0, t.start - a / sample_rate), max(0.0, t.end - a / sample_rate)) for t in timings]
    return audio[a:b], shifted


@dataclass
class Speech:
    """One rendered sentence: audio with a timing for every phoneme token."""

    audio: np.ndarray
    sample_rate: int
    text: TokenizedText
    timings: list[Timing]
    alignment: dict[str, Any]


def speak(
    teacher_name: str, voice: str, rate: float, transform: SpeakerTransform, normalized: str, language: str
) -> Speech:
    """Synthesise, time every token, apply the speaker transform and trim to the speech."""
    text = tokenize(normalized, language)
    utterance = get_teacher(teacher_name).synthesize(normalized, voice, rate)
    audio, sample_rate = utterance.audio, utterance.sample_rate
    timings, alignment = token_timings(audio, sample_rate, utterance.phones, text, normalized, language)
    if not transform.is_identity:
        audio = apply_speaker_transform(audio, sample_rate, transform)
        timings = [Timing(t.label, transform.moved(t.start), transform.moved(t.end)) for t in timings]
    audio, timings = trim_to_speech(audio, sample_rate, timings)
    return Speech(audio, sample_rate, text, timings, alignment)


def render_speech(spec: dict[str, Any], corpus_dir: str) -> dict[str, Any]:
    """Synthesise one sentence with one speaker; see `sonare.data.build.plan_speech` for the spec."""
    language = spec["language"]
    speech = speak(
        spec["teacher"], spec["voice"], spec["rate"], SpeakerTransform.from_dict(spec["transform"]),
        spec["normalized"], language,
    )  # fmt: skip
    audio, rate = speech.audio, speech.sample_rate
    if spec.get("sample_rate") and spec["sample_rate"] != rate:
        audio, rate = resample(audio, rate, spec["sample_rate"]), spec["sample_rate"]
    audio = normalize_level(audio, rate)
    save_audio(Path(corpus_dir) / spec["audio"], audio, rate)
    duration = len(audio) / rate
    timings = [Timing(t.label, min(t.start, duration), min(t.end, duration)) for t in speech.timings]
    return {
        "id": spec["id"],
        "section": spec["section"],
        "audio": spec["audio"],
        "text": spec["text"],
        "normalized": spec["normalized"],
        "phonemes": speech.text.tokens,
        "words": word_spans(speech.text, timings),
        "phones": phone_spans(timings),
        "speaker": spec["speaker"],
        "teacher": spec["teacher"],
        "voice": spec["voice"],
        "rate": spec["rate"],
        "transform": spec["transform"],
        "augment": {},
        "language": language,
        "duration": round(duration, 4),
        "sample_rate": rate,
        "split": spec["split"],
        "tasks": spec["tasks"],
        "alignment": speech.alignment,
    }
