"""The voice library: the TTS model's built-in voices plus voices stored in SQLite.

Stored voices live in `voices.sqlite3` in the data directory, their speaker embedding as a float32
blob, so cloning, mixing and editing only add, change or remove rows. Voice ids are opaque strings
(UUIDs for stored voices): they are looked up, never used to build a path. Listing order is stable
(built-ins in the model's order, then stored voices oldest first), which is what makes id cursors
(`starting_after`, `ending_before`) page correctly.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

SCHEMA_VERSION = 1
BUILTIN_CREATED_AT = "2026-01-01T00:00:00Z"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS voices (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL,
    gender TEXT,
    source TEXT NOT NULL,
    created_at TEXT NOT NULL,
    embedding BLOB NOT NULL
);
"""


@dataclass(frozen=True)
class Voice:
    id: str
    name: str
    description: str
    language: str
    gender: str | None
    created_at: str  # ISO-8601, UTC
    embedding: np.ndarray  # float32, 1-D
    builtin: bool


@dataclass(frozen=True)
class VoiceFilter:
    q: str | None = None  # case-insensitive substring of the name or description
    gender: str | None = None
    is_owner: bool | None = None  # stored voices are the owner's; built-ins are not

    def accepts(self, voice: Voice) -> bool:
        if self.q and self.q.lower() not in f"{voice.name}\n{voice.description}".lower():
            return False
        if self.gender is not None and voice.gender != self.gender:
            return False
        return self.is_owner is None or self.is_owner != voice.builtin


class UnknownCursor(KeyError):
    """A paging cursor names no voice."""


class BuiltinVoice(PermissionError):
    """Built-in voices belong to the model: they cannot be changed or deleted."""


class VoiceLibrary:
    def __init__(self, path: Path, builtins: Sequence[Mapping[str, Any]] = ()):
        self._builtins = [_builtin(v) for v in builtins]
        self._builtin_index = {v.id: i for i, v in enumerate(self._builtins)}
        path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared under a lock: queries are tiny, and it keeps writes serialised.
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @property
    def embedding_dim(self) -> int | None:
        """The speaker-embedding size of the TTS model, known from its built-in voices."""
        return len(self._builtins[0].embedding) if self._builtins else None

    def get(self, voice_id: str) -> Voice | None:
        if voice_id in self._builtin_index:
            return self._builtins[self._builtin_index[voice_id]]
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM voices WHERE id = ?", (voice_id,)).fetchone()
        return _stored(row) if row else None

    def add(
        self,
        name: str,
        embedding: Sequence[float] | np.ndarray,
        language: str,
        description: str = "",
        gender: str | None = None,
        source: str = "embedding",
    ) -> Voice:
        vector = np.asarray(embedding, dtype="<f4").reshape(-1)
        if self.embedding_dim is not None and len(vector) != self.embedding_dim:
            raise ValueError(f"embedding must have {self.embedding_dim} values, not {len(vector)}")
        if not np.isfinite(vector).all():
            raise ValueError("embedding values must be finite numbers")
        voice_id = str(uuid.uuid4())
        created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        with self._lock:
            self._db.execute(
                "INSERT INTO voices (id, name, description, language, gender, source, created_at, embedding) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (voice_id, name, description, language, gender, source, created, vector.tobytes()),
            )
        voice = self.get(voice_id)
        assert voice is not None
        return voice

    def update(
        self, voice_id: str, name: str | None = None, description: str | None = None, gender: str | None = None
    ) -> Voice | None:
        """Change a stored voice's metadata (None: keep); the updated voice, or None if no stored voice has the id."""
        if voice_id in self._builtin_index:
            raise BuiltinVoice(voice_id)
        changes = {k: v for k, v in (("name", name), ("description", description), ("gender", gender)) if v is not None}
        if changes:
            assignments = ", ".join(f"{column} = ?" for column in changes)  # column names from the literal above
            with self._lock:
                self._db.execute(f"UPDATE voices SET {assignments} WHERE id = ?", (*changes.values(), voice_id))
        return self.get(voice_id)

    def delete(self, voice_id: str) -> bool:
        """Remove a stored voice; False if no stored voice has the id."""
        if voice_id in self._builtin_index:
            raise BuiltinVoice(voice_id)
        with self._lock:
            return self._db.execute("DELETE FROM voices WHERE id = ?", (voice_id,)).rowcount > 0

    def page(
        self,
        limit: int,
        starting_after: str | None = None,
        ending_before: str | None = None,
        where: VoiceFilter | None = None,
    ) -> tuple[list[Voice], bool]:
        """Up to `limit` voices after (or before) a cursor, and whether more lie in that direction."""
        where = where or VoiceFilter()
        if ending_before is not None:
            before = self._walk(ending_before, backwards=True, where=where)
            taken = [v for _, v in zip(range(limit + 1), before, strict=False)]
            return list(reversed(taken[:limit])), len(taken) > limit
        after = self._walk(starting_after, backwards=False, where=where)
        taken = [v for _, v in zip(range(limit + 1), after, strict=False)]
        return taken[:limit], len(taken) > limit

    def _walk(self, cursor: str | None, backwards: bool, where: VoiceFilter) -> Iterator[Voice]:
        """Voices strictly after (or, backwards, before) `cursor` in listing order, filtered, lazily."""
        builtins: Sequence[Voice] = self._builtins
        stored: Iterator[Voice] | None = None
        if cursor in self._builtin_index:
            i = self._builtin_index[cursor]
            builtins = self._builtins[:i] if backwards else self._builtins[i + 1 :]
            stored = iter(()) if backwards else self._stored(None, backwards)
        elif cursor is not None:
            with self._lock:
                row = self._db.execute("SELECT seq FROM voices WHERE id = ?", (cursor,)).fetchone()
            if row is None:
                raise UnknownCursor(cursor)
            builtins = self._builtins if backwards else []
            stored = self._stored(row[0], backwards)
        if stored is None:
            stored = self._stored(None, backwards)
        parts = (stored, reversed(builtins)) if backwards else (iter(builtins), stored)
        for part in parts:
            yield from (v for v in part if where.accepts(v))

    def _stored(self, seq_bound: int | None, backwards: bool, batch: int = 100) -> Iterator[Voice]:
        """Stored voices beyond `seq_bound` in keyset order, fetched a batch at a time."""
        while True:
            if backwards:
                clause, order = ("WHERE seq < ?", "DESC") if seq_bound is not None else ("", "DESC")
            else:
                clause, order = ("WHERE seq > ?", "ASC") if seq_bound is not None else ("", "ASC")
            params: tuple[Any, ...] = (seq_bound,) if seq_bound is not None else ()
            with self._lock:
                rows = self._db.execute(
                    f"SELECT {_COLUMNS}, seq FROM voices {clause} ORDER BY seq {order} LIMIT {batch}", params
                ).fetchall()
            for row in rows:
                yield _stored(row[:-1])
            if len(rows) < batch:
                return
            seq_bound = rows[-1][-1]


_COLUMNS = "id, name, description, language, gender, created_at, embedding"


def _stored(row: tuple) -> Voice:
    voice_id, name, description, language, gender, created_at, blob = row
    embedding = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    return Voice(voice_id, name, description, language, gender, created_at, embedding, builtin=False)


def _builtin(spec: Mapping[str, Any]) -> Voice:
    return Voice(
        id=str(spec["id"]),
        name=str(spec.get("name", spec["id"])),
        description=str(spec.get("description", "")),
        language=str(spec.get("language", "en")),
        gender=spec.get("gender"),
        created_at=BUILTIN_CREATED_AT,
        embedding=np.asarray(spec["embedding"], dtype=np.float32).reshape(-1),
        builtin=True,
    )


def configured_library(data_dir: str | None, model_dir: str | None) -> tuple[VoiceLibrary, list[dict]]:
    """The library of the server's configured data directory, with the TTS model's built-in voices: what the
    command line shares with a running server."""
    from sonare.server.config import load_config
    from sonare.tts import builtin_voices

    config = load_config({"data_dir": data_dir})
    builtins = builtin_voices(model_dir)
    return VoiceLibrary(config.data_dir / "voices.sqlite3", builtins), builtins
