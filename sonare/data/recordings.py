"""A team's own recordings as a corpus section, so that the recipes train on real voices.

Two layouts, the common ones for TTS datasets:

    my-voice/metadata.csv + my-voice/wavs/ID.wav               LJSpeech: one speaker, named after the folder
    voices/<speaker>/metadata.csv + voices/<speaker>/wavs/...  one such folder per speaker

Each line of metadata.csv is `ID|text` or, as LJSpeech ships it, `ID|text|normalized text` (numbers and
abbreviations spelled out: what was actually spoken, so it is preferred). A section of kind `recordings`
(`path:` the folder) turns every line into a corpus item like the teachers' ones: the text goes through
`sonare.text` (the front end inference uses), the corpus's forced aligner (`sonare.data.align`) times every
phoneme in the audio, and the audio is trimmed to the speech and level-normalised. Records carry teacher
`recorded` and speaker `recorded:<speaker>`, which a TTS recipe selects with `teachers: [recorded]`
(see configs/tts-recorded.yaml). Lines whose audio is missing or unreadable are skipped with a message.
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

METADATA = "metadata.csv"
TEACHER = "recorded"


@dataclass(frozen=True)
class Recording:
    speaker: str
    id: str
    wav: Path
    text: str  # what was spoken: the normalized column when the metadata has one


def read_recordings(path: str | Path) -> list[Recording]:
    """Every line of the dataset's metadata, in file order; ValueError when the layout is neither."""
    root = Path(path).expanduser()
    if (root / METADATA).is_file():
        folders = [root]
    else:
        folders = sorted(p for p in root.iterdir() if (p / METADATA).is_file()) if root.is_dir() else []
    if not folders:
        raise ValueError(f"{root}: no {METADATA} in it nor in any folder directly under it (LJSpeech layout)")
    recordings = []
    for folder in folders:
        with (folder / METADATA).open(encoding="utf-8", newline="") as f:
            for row in csv.reader(f, delimiter="|", quoting=csv.QUOTE_NONE):
                if len(row) < 2 or not row[0].strip():
                    continue
                name = row[0].strip()
                spoken = (row[2] if len(row) > 2 and row[2].strip() else row[1]).strip()
                if spoken:
                    recordings.append(Recording(folder.name, name, folder / "wavs" / f"{name}.wav", spoken))
    return recordings


def plan_recordings(section, language: str) -> Iterator[dict[str, Any]]:
    """One spec per recording of the section's dataset (`sonare.data.build` renders them in order)."""
    for rec in read_recordings(section.path):
        yield {
            "kind": "recordings",
            "id": f"{section.name}-{safe_name(rec.speaker)}-{safe_name(rec.id)}",
            "section": section.name,
            "audio": f"audio/{section.name}/{safe_name(rec.speaker)}/{safe_name(rec.id)}.wav",
            "source": str(rec.wav),
            "text": rec.text,
            "speaker": rec.speaker,
            "language": language,
            "split": section.split,
            "tasks": list(section.tasks),
        }


def safe_name(name: str) -> str:
    """A file-name-safe form of a name from the user's metadata (never used as given)."""
    clean = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "x"
    if clean != name:
        clean += "-" + hashlib.sha1(name.encode()).hexdigest()[:6]
    return clean[:80]


def render_recording(spec: dict[str, Any], corpus_dir: str) -> dict[str, Any]:
    """Time, trim and level one recording; see `plan_recordings` for the spec."""
    from sonare.audio.io import load_audio, save_audio
    from sonare.data.render import normalize_level, phone_spans, token_timings, trim_to_speech, word_spans
    from sonare.data.tokens import tokenize
    from sonare.text import normalize

    language = spec["language"]
    audio, rate = load_audio(spec["source"])
    normalized = normalize(spec["text"])
    text = tokenize(normalized, language)
    if not text.tokens:
        raise ValueError(f"no phonemes in {spec['text']!r}")
    timings, alignment = token_timings(audio, rate, None, text, normalized, language)
    audio, timings = trim_to_speech(audio, rate, timings)
    audio = normalize_level(audio, rate)
    save_audio(Path(corpus_dir) / spec["audio"], audio, rate)
    return {
        "id": spec["id"],
        "section": spec["section"],
        "audio": spec["audio"],
        "text": spec["text"],
        "normalized": normalized,
        "phonemes": text.tokens,
        "words": word_spans(text, timings),
        "phones": phone_spans(timings),
        "speaker": f"{TEACHER}:{spec['speaker']}",
        "teacher": TEACHER,
        "voice": spec["speaker"],
        "rate": 1.0,
        "transform": {},
        "augment": {},
        "language": language,
        "duration": round(len(audio) / rate, 4),
        "sample_rate": rate,
        "split": spec["split"],
        "tasks": spec["tasks"],
        "alignment": alignment,
    }
