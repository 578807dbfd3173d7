"""STT training examples: log-mel frames, CTC targets and per-encoder-frame turn labels.

Sources, each given as a path in the recipe:
- a Sonare corpus manifest (`sonare data build`): records tagged `stt`; features come from the corpus's
  cached shards (records not cached yet, as in a corpus still building, are skipped). Word timings give
  speech labels; the labelled pauses of conversation records give end-of-turn labels;
- a transcribed-audio manifest of your own: JSON lines with `audio` (or `path`) and `text`, or a TSV file
  of `path<TAB>text`; relative paths are relative to the manifest;
- a LibriSpeech-style folder: `*.trans.txt` files of `ID text` lines beside `ID.flac` (or .wav).
Features of the last two are cached under `<cache>/<source hash>/` with the corpus feature cache.

Turn labels are at the encoder rate, for the moment each encoder frame is ready (`frame_time`): speech is
1 inside a word; end is 0 in speech and in pauses to think (holds mid-sentence) and rises linearly from 0 to 1
over the first END_RAMP_SECONDS of an end-of-turn pause or of a hold after a complete sentence. Such a hold is
heard exactly as an end until the speaker goes on (`sonare.data.conversations`), so a label of 0 there would
only teach the head to doubt every sentence end, and ends and pauses to think would blur together (session 27,
docs/benchmarks.md). Where a label is unknown it is NaN (masked in the loss): end before the first word of a
conversation, and end outside words for utterances without labelled pauses.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sonare.stt.model import SUBSAMPLING, frame_time
from sonare.stt.vocab import encode

END_RAMP_SECONDS = 0.2
AUDIO_SUFFIXES = (".flac", ".wav", ".mp3", ".ogg", ".opus", ".m4a")


@dataclass
class Utterance:
    id: str
    source: str  # section name, or the source path for external data
    mel: np.ndarray  # (T, 80) float16, T a multiple of SUBSAMPLING
    target: np.ndarray  # (S,) int64 CTC target ids
    speech: np.ndarray  # (L,) float32 in {0, 1} or NaN
    end: np.ndarray  # (L,) float32 in [0, 1] or NaN
    text: str  # reference transcript
    pauses: list[dict[str, Any]] | None = None  # labelled pauses of a conversation
    phones: np.ndarray | None = None  # (L,) int64 phoneme id heard at each frame (PAD_ID: silence), or None

    @property
    def n_frames(self) -> int:
        return len(self.mel) // SUBSAMPLING


def turn_labels(
    n_frames: int, words: list[dict[str, Any]] | None, pauses: list[dict[str, Any]] | None
) -> tuple[np.ndarray, np.ndarray]:
    """(speech, end) per encoder frame from word timings and labelled pauses; NaN where unknown."""
    speech = np.full(n_frames, np.nan, np.float32)
    end = np.full(n_frames, np.nan, np.float32)
    if not words:
        return speech, end
    times = np.array([frame_time(k) for k in range(n_frames)])
    # The newest 40 ms of a frame decide whether it is speech.
    probe = times - 0.02
    speech[:] = 0.0
    for w in words:
        inside = (probe >= w["start"]) & (probe < w["end"])
        speech[inside] = 1.0
        end[inside] = 0.0
    for p in pauses or []:
        inside = (times >= p["start"]) & (times < p["end"]) & (speech == 0.0)
        if p["kind"] == "end_of_turn" or p.get("after_sentence"):
            end[inside] = np.clip((times[inside] - p["start"]) / END_RAMP_SECONDS, 0.0, 1.0)
        else:
            end[inside] = 0.0
    return speech, end


def phone_labels(n_frames: int, phones: list[dict[str, Any]] | None) -> np.ndarray | None:
    """Per encoder frame, the id (shared inventory) of the phoneme its newest audio belongs to; PAD_ID between
    phonemes. These frame targets train an auxiliary head only: the CTC alphabet stays characters."""
    from sonare.text.inventory import PAD_ID, token_ids

    if not phones:
        return None
    probe = np.array([frame_time(k) for k in range(n_frames)]) - 0.02
    labels = np.full(n_frames, PAD_ID, np.int64)
    for p in phones:
        ids = token_ids(p["phoneme"])
        if p["end"] > p["start"] and ids:
            labels[(probe >= p["start"]) & (probe < p["end"])] = ids[0]
    return labels


def _trim(mel: np.ndarray) -> np.ndarray:
    return mel[: len(mel) // SUBSAMPLING * SUBSAMPLING]


def _example(item_id: str, source: str, mel: np.ndarray, text: str, record: dict[str, Any]) -> Utterance | None:
    from sonare.text import normalize

    target = encode(normalize(text))
    mel = _trim(mel)
    n = len(mel) // SUBSAMPLING
    if target is None or n == 0:
        return None  # not spellable, or no whole encoder frame
    speech, end = turn_labels(n, record.get("words"), record.get("pauses"))
    phones = phone_labels(n, record.get("phones"))
    return Utterance(item_id, source, mel, np.array(target, np.int64), speech, end, text, record.get("pauses"), phones)


def load_corpus(
    manifest: str | os.PathLike, split: str, teachers_out: list[str] | None = None, task: str = "stt"
) -> list[Utterance]:
    """Utterances of `split` for `task` (`stt`, or `turn`: the conversations) from a corpus manifest, with the
    corpus's cached features."""
    from sonare.data.featcache import FeatureStore
    from sonare.data.manifest import read_manifest

    corpus = Path(manifest).parent
    records = [
        r
        for r in read_manifest(manifest)
        if task in r.get("tasks", ["stt"]) and r["split"] == split and r.get("teacher") not in (teachers_out or [])
    ]
    store = FeatureStore(corpus)
    uncached = sum(r["id"] not in store for r in records)
    if uncached:  # a build still running caches them later; never write into a corpus another process builds
        print(f"{manifest}: {uncached} {split} utterances without cached features skipped (`sonare data features`)")
    out = []
    for r in records:
        if r["id"] not in store:
            continue
        ex = _example(r["id"], r["section"], np.asarray(store[r["id"]]), r.get("normalized") or r["text"], r)
        if ex is not None:
            out.append(ex)
    return out


def _external_records(source: Path) -> list[dict[str, Any]]:
    """(id, absolute audio path, text) records of a transcribed-audio manifest or a LibriSpeech folder."""
    records = []
    if source.is_dir():
        for trans in sorted(source.rglob("*.trans.txt")):
            for line in trans.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                item, _, text = line.partition(" ")
                audio = next(
                    (trans.parent / (item + s) for s in AUDIO_SUFFIXES if (trans.parent / (item + s)).exists()), None
                )
                if audio is not None:
                    records.append({"id": item, "audio": str(audio.resolve()), "text": text})
        return records
    for n, line in enumerate(source.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        if source.suffix == ".jsonl":
            row = json.loads(line)
            path, text = row.get("audio") or row["path"], row["text"]
        else:
            path, _, text = line.partition("\t")
        audio = Path(path) if Path(path).is_absolute() else source.parent / path
        records.append({"id": f"{source.stem}-{n:07d}", "audio": str(audio.resolve()), "text": text})
    return records


def load_external(source: str | os.PathLike, cache_dir: str | os.PathLike) -> list[Utterance]:
    """Utterances of a transcribed-audio manifest or a LibriSpeech-style folder (no turn labels)."""
    from sonare.data.featcache import FeatureStore, cache_features

    source = Path(source)
    records = _external_records(source)
    key = hashlib.sha1(str(source.resolve()).encode()).hexdigest()[:12]
    cache = Path(cache_dir) / key
    cache_features(cache, records)  # absolute audio paths: the cache directory only holds features
    store = FeatureStore(cache)
    out = []
    for r in records:
        ex = _example(r["id"], str(source), np.asarray(store[r["id"]]), r["text"], {})
        if ex is not None:
            out.append(ex)
    return out


def load_source(
    path: str | os.PathLike, split: str, cache_dir: str | os.PathLike, teachers_out: list[str] | None = None
) -> list[Utterance]:
    """A corpus manifest (named manifest.jsonl with corpus features beside it) or external transcribed audio."""
    path = Path(path)
    if path.name == "manifest.jsonl" and (path.parent / "audio").is_dir():
        return load_corpus(path, split, teachers_out)
    return load_external(path, cache_dir) if split == "train" else []
