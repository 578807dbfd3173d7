"""The streaming session interface: what the engine needs from a model, and nothing about what it does.

A model owns a batched state (one row per stream) and creates sessions. A session is the host-side half of
one stream: it buffers inputs (text pieces, audio chunks, control messages), says when it has work, and turns
the model's per-row outputs into events. All session methods run on the engine thread, so sessions need no
locks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from sonare.ssm.state import BatchState


class Session(Protocol):
    def push(self, item: Any) -> None:
        """Accept one input (a text piece, an audio chunk, or a control message such as flush)."""

    def ready(self, now: float) -> bool:
        """True when a step would make progress (enough input, and not too far ahead of real time)."""

    def deadline(self) -> float | None:
        """Monotonic time by which this stream needs its next step to avoid an underrun; None if unpaced."""

    def finished(self) -> bool:
        """True when the stream has emitted everything it ever will."""


class StreamingModel(Protocol):
    name: str

    def new_state(self, slots: int) -> BatchState:
        """Preallocate state for `slots` streams (all zero: a zero row is a fresh stream)."""

    def open(self, options: Mapping[str, Any]) -> Session:
        """Validate `options` (raise ValueError with a client-facing message) and create a session."""

    def step(self, state: BatchState, sessions: Sequence[Session]) -> tuple[BatchState, list[list[Any]]]:
        """One batched step over `sessions`, whose rows (in order) are `state`.

        Returns the rows' next state and the events each session emits, in order."""
