"""The corpus manifest: one JSON object per line, appended as items finish.

Readers (training jobs) may read the file while the build is still appending to it, so each line
is written with a single `write` of the whole line followed by flush and fsync; a line cut short by
a kill is the only possible damage, and `read_manifest` ignores it (`repair_manifest` removes it
before the builder appends again).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

MANIFEST_NAME = "manifest.jsonl"

# Fields every record carries, with their JSON types.
REQUIRED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "audio": str,
    "text": str,
    "normalized": str,
    "phonemes": list,
    "words": list,
    "phones": list,
    "speaker": str,
    "teacher": str,
    "voice": str,
    "transform": dict,
    "augment": dict,
    "language": str,
    "duration": (int, float),
    "sample_rate": int,
    "split": str,
    "section": str,
    "tasks": list,
}


def validate_record(record: dict[str, Any]) -> None:
    """Raise ValueError when a record breaks the schema (see docs in `sonare.data`)."""
    for name, kind in REQUIRED_FIELDS.items():
        if name not in record:
            raise ValueError(f"{record.get('id')}: missing field {name!r}")
        if not isinstance(record[name], kind):
            raise ValueError(f"{record.get('id')}: field {name!r} has type {type(record[name]).__name__}")
    if record["split"] not in ("train", "heldout"):
        raise ValueError(f"{record['id']}: split must be train or heldout")
    phones = record["phones"]
    if phones and [p["phoneme"] for p in phones] != record["phonemes"]:
        raise ValueError(f"{record['id']}: phones do not follow phonemes")
    previous = 0.0
    for span in [*phones, *record["words"]]:
        if not 0.0 <= span["start"] <= span["end"] <= record["duration"] + 1e-3:
            raise ValueError(f"{record['id']}: span {span} outside the audio")
    for p in phones:
        if p["start"] < previous - 1e-6:
            raise ValueError(f"{record['id']}: phones overlap or go backwards")
        previous = p["end"]


def read_manifest(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Complete records in file order; a truncated final line is skipped. Conversations built before the builder
    labelled their holds get the label here (`label_holds`)."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                break
            record = json.loads(line)
            if "pauses" in record:
                label_holds(record)
            yield record


def split_records(path: str | os.PathLike, split: str) -> list[dict[str, Any]]:
    """The records of one split ("train" or "heldout"); a missing manifest is the user's error, said plainly."""
    if not Path(path).is_file():
        raise SystemExit(f"no manifest at {path}")
    return [r for r in read_manifest(path) if r.get("split") == split]


def load_record_audio(path: str | os.PathLike, record: dict[str, Any]) -> tuple[np.ndarray, int]:
    """A record's samples and rate; its audio path is relative to the manifest at `path` unless absolute."""
    from sonare.audio.io import load_audio

    audio = Path(record["audio"])
    return load_audio(audio if audio.is_absolute() else Path(path).parent / audio)


def ends_sentence(text: str) -> bool:
    return text.rstrip()[-1:] in ".?!"


def label_holds(record: dict[str, Any]) -> None:
    """Give each hold pause without one its `after_sentence` label: whether the word spoken before it ends a
    sentence in the record's normalized text. Holds stay unlabelled where the record has no timed words or they
    do not line up one to one with the text's."""
    holds = [p for p in record["pauses"] if p["kind"] == "hold" and "after_sentence" not in p]
    tokens, words = record.get("normalized", "").split(), record.get("words", [])
    if not holds or not words or len(tokens) != len(words):
        return
    for pause in holds:
        spoken = sum(w["end"] <= pause["start"] + 1e-3 for w in words)  # word ends are rounded to 0.1 ms
        if spoken:
            pause["after_sentence"] = ends_sentence(tokens[spoken - 1])


def repair_manifest(path: str | os.PathLike) -> None:
    """Cut a trailing partial line (left by a kill mid-write) so appends start on a fresh line."""
    path = Path(path)
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


class ManifestWriter:
    """Appends records, one whole line per write, durable before `append` returns."""

    def __init__(self, path: str | os.PathLike) -> None:
        repair_manifest(path)
        self._file = open(path, "ab")  # noqa: SIM115 - held open for the life of the build

    def append(self, record: dict[str, Any]) -> None:
        self._file.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ManifestWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
