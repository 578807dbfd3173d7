"""16 kHz log-mel features cached once in memory-mapped shards, so STT training reads, not computes.

Layout under <corpus>/features/: shard-00000.npy, ... each a float16 array (frames, 80) holding
many utterances end to end, and index.jsonl with one line per utterance:
{"id", "shard", "offset", "frames"}. A shard is written under a temporary name and renamed, then
its index lines are appended, so a killed run loses at most the shard it was filling; a restart
skips every id already indexed. Writers (the corpus build, a training job filling gaps) take an
exclusive lock on the directory, so they never write the same shard; readers need no lock.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from sonare.audio import features
from sonare.audio.io import load_audio

FEATURES_DIR = "features"
INDEX_NAME = "index.jsonl"
SHARD_FRAMES = 360_000  # one hour of 10 ms frames, about 55 MB in float16


def _read_index(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    entries = []
    with path.open("rb") as f:
        for line in f:
            if line.endswith(b"\n"):
                entries.append(json.loads(line))
    return entries


def utterance_features(path: str | Path) -> np.ndarray:
    """Log-mel frames of one audio file, as stored in the cache (float16)."""
    audio, _ = load_audio(path, features.SAMPLE_RATE)
    return features.log_mel(audio).numpy().astype(np.float16)


def cache_features(
    corpus_dir: str | Path,
    records: Iterable[dict[str, Any]],
    progress: bool = True,
    map_fn: Callable[..., Iterable[np.ndarray]] = map,
) -> int:
    """Compute and store features for the records not yet indexed; returns how many were added.

    `map_fn` computes them: the builder passes its process pool's `map` to use every core.
    """
    directory = Path(corpus_dir) / FEATURES_DIR
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _cache_locked(Path(corpus_dir), directory, list(records), progress, map_fn)
        finally:
            # Unlock explicitly: worker processes forked meanwhile share this open file, and
            # closing our descriptor alone would leave the lock held by them.
            fcntl.flock(lock, fcntl.LOCK_UN)


def _cache_locked(
    corpus_dir: Path, directory: Path, records: list[dict[str, Any]], progress: bool, map_fn: Callable
) -> int:
    from tqdm import tqdm

    index_path = directory / INDEX_NAME
    indexed = _read_index(index_path)
    done = {e["id"] for e in indexed}
    shard = 1 + max((e["shard"] for e in indexed), default=-1)
    pending = [r for r in records if r["id"] not in done]
    buffer: list[np.ndarray] = []
    entries: list[dict[str, Any]] = []
    filled = 0

    def write_shard() -> None:
        nonlocal shard, filled
        if not buffer:
            return
        name = f"shard-{shard:05d}.npy"
        tmp = directory / f".{name}.tmp"
        with tmp.open("wb") as f:
            np.save(f, np.concatenate(buffer))
        os.replace(tmp, directory / name)
        with index_path.open("ab") as f:
            f.write("".join(json.dumps(e) + "\n" for e in entries).encode())
            f.flush()
            os.fsync(f.fileno())
        buffer.clear()
        entries.clear()
        shard += 1
        filled = 0

    mels = map_fn(utterance_features, [corpus_dir / r["audio"] for r in pending])
    bar = tqdm(pending, desc="features", disable=not progress or not pending, mininterval=5)
    for record, mel in zip(bar, mels, strict=True):
        entries.append({"id": record["id"], "shard": shard, "offset": filled, "frames": len(mel)})
        buffer.append(mel)
        filled += len(mel)
        if filled >= SHARD_FRAMES:
            write_shard()
    write_shard()
    return len(pending)


class FeatureStore:
    """Read access to cached features: `store[id]` is a (frames, 80) float16 view of a shard."""

    def __init__(self, corpus_dir: str | Path) -> None:
        directory = Path(corpus_dir) / FEATURES_DIR
        self._directory = directory
        self._entries = {e["id"]: e for e in _read_index(directory / INDEX_NAME)}
        self._shards: dict[int, np.ndarray] = {}

    def __contains__(self, item_id: str) -> bool:
        return item_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def ids(self) -> list[str]:
        return list(self._entries)

    def __getitem__(self, item_id: str) -> np.ndarray:
        entry = self._entries[item_id]
        shard = self._shards.get(entry["shard"])
        if shard is None:
            shard = np.load(self._directory / f"shard-{entry['shard']:05d}.npy", mmap_mode="r")
            self._shards[entry["shard"]] = shard
        return shard[entry["offset"] : entry["offset"] + entry["frames"]]
