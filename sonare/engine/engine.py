"""The streaming engine: one inference thread stepping every active stream of every model in batches.

Streams are rows ("slots") of preallocated state tensors. Each loop iteration admits new streams (resetting
their rows), feeds queued inputs to their sessions, and for each model gathers the rows of the streams that
have work (new streams first, alone while running streams have audio to spare, then by playback deadline),
runs one batched step, scatters the rows back and hands the events to the asyncio side with
`call_soon_threadsafe`, so the event loop never waits on a model.

Thread ownership: models and sessions are touched only by the engine thread; the event loop touches only a
stream's inbox (a deque, whose append is atomic) and, under `_lock`, the slot bookkeeping.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from sonare.engine.metrics import EngineMetrics
from sonare.engine.model import Session, StreamingModel
from sonare.ssm.state import BatchState

log = logging.getLogger(__name__)

_END = object()  # queued after a stream's last event
# New streams take a step of their own (their first audio is what users wait for) while every running stream
# has audio buffered for at least this many of the pool's recent steps (the new streams' step, then the next
# one with everybody); otherwise they join the running streams' step.
FRESH_ALONE_STEPS = 2.0


class EngineFull(Exception):
    """No free slot: the caller should refuse at once (HTTP 429, WebSocket close 1013)."""

    def __init__(self, model: str, slots: int):
        super().__init__(f"all {slots} {model} stream slots are busy")
        self.model = model
        self.slots = slots


class EngineClosed(Exception):
    """The engine is draining or stopped and admits no new streams."""


class StreamFailed(Exception):
    """A stream ended with an error. `client_error` is True when the input was at fault."""

    def __init__(self, message: str, client_error: bool):
        super().__init__(message)
        self.client_error = client_error


class Stream:
    """The event-loop side of one admitted stream: push inputs, iterate events, cancel."""

    def __init__(self, engine: Engine, model: str, slot: int, session: Session, loop: asyncio.AbstractEventLoop):
        self.id = next(_stream_ids)
        self.model = model
        self.slot = slot
        self.session = session
        self.admitted_at = time.monotonic()
        self._engine = engine
        self._loop = loop
        self._events: asyncio.Queue[Any] = asyncio.Queue()
        self._inbox: collections.deque[Any] = collections.deque()
        self.released = False  # slot returned to the pool (guarded by the engine lock)
        self.cancelled = False
        # engine-thread bookkeeping
        self.started = False  # has emitted at least one event
        self.ready_since: float | None = None

    def push(self, item: Any) -> None:
        """Queue one input for the session; safe from any thread."""
        self._inbox.append(item)
        self._engine.wake()

    def cancel(self) -> None:
        """Stop now: the slot is free when this returns; events already queued are dropped."""
        self._engine.cancel(self)

    @property
    def done(self) -> bool:
        return self.released

    def __aiter__(self) -> Stream:
        return self

    async def __anext__(self) -> Any:
        event = await self._events.get()
        if event is _END:
            self._events.put_nowait(_END)  # later readers also see the end
            raise StopAsyncIteration
        if isinstance(event, StreamFailed):
            self._events.put_nowait(_END)
            raise event
        return event

    # engine thread -> event loop
    def _deliver(self, events: list[Any]) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop means nobody is listening any more
            self._loop.call_soon_threadsafe(_put_all, self._events, events)


def _put_all(queue: asyncio.Queue, events: list[Any]) -> None:
    for event in events:
        queue.put_nowait(event)


_stream_ids = itertools.count(1)


@dataclass
class _Pool:
    """One model's slots and the streams in them."""

    model: StreamingModel
    state: BatchState
    slots: int
    free: list[int]
    pending: list[Stream] = field(default_factory=list)  # admitted, row not yet reset (guarded by lock)
    active: list[Stream] = field(default_factory=list)  # engine thread only
    recent_step_s: float = 0.0  # moving average of step time (engine thread only)


class Engine:
    def __init__(
        self,
        models: Mapping[str, StreamingModel],
        slots: int | Mapping[str, int] = 64,
        max_batch: int = 64,
        threads: int | None = None,
        metrics: EngineMetrics | None = None,
        idle_wait: float = 0.05,
    ):
        self.metrics = metrics or EngineMetrics()
        self.max_batch = max_batch
        self.threads = threads
        self.idle_wait = idle_wait
        self._pools: dict[str, _Pool] = {}
        for name, model in models.items():
            n = slots if isinstance(slots, int) else slots[name]
            with torch.inference_mode():
                state = model.new_state(n)
            self._pools[name] = _Pool(model=model, state=state, slots=n, free=list(range(n - 1, -1, -1)))
            self.metrics.slots.labels(name).set(n)
            self.metrics.active_streams.labels(name).set(0)
            self.metrics.underruns.labels(name)  # export zeros from the start, not only after a first event
            self.metrics.stream_errors.labels(name)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._running = False
        self._admitting = True
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        self._running = True
        self._thread = threading.Thread(target=self._run, name="sonare-engine", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._running = False
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    @property
    def alive(self) -> bool:
        """The inference thread is running (liveness: a dead thread means no stream makes progress)."""
        return self._thread is not None and self._thread.is_alive()

    def stop_admitting(self) -> None:
        """Drain: refuse new streams; streams already admitted run to their end."""
        self._admitting = False

    @property
    def models(self) -> dict[str, StreamingModel]:
        return {name: pool.model for name, pool in self._pools.items()}

    def active_streams(self, model: str | None = None) -> int:
        with self._lock:
            pools = [self._pools[model]] if model else list(self._pools.values())
            return sum(p.slots - len(p.free) for p in pools)

    def free_slots(self, model: str) -> int:
        with self._lock:
            return len(self._pools[model].free)

    def wake(self) -> None:
        self._wake.set()

    # -- admission (event loop side) -------------------------------------------------------------------------

    def open(self, model: str, options: Mapping[str, Any] | None = None) -> Stream:
        """Admit a stream or refuse at once. Raises KeyError (unknown model), ValueError (bad options),
        EngineFull or EngineClosed."""
        pool = self._pools[model]
        if not self._admitting or not self._running:
            self.metrics.rejected.labels(model, "draining").inc()
            raise EngineClosed("the server is draining and admits no new streams")
        session = pool.model.open(options or {})
        with self._lock:
            if not pool.free:
                self.metrics.rejected.labels(model, "full").inc()
                raise EngineFull(model, pool.slots)
            stream = Stream(self, model, pool.free.pop(), session, asyncio.get_running_loop())
            pool.pending.append(stream)
            self.metrics.active_streams.labels(model).set(pool.slots - len(pool.free))
        self._wake.set()
        return stream

    def cancel(self, stream: Stream) -> None:
        self._release(stream, cancelled=True)
        self._wake.set()

    def _release(self, stream: Stream, cancelled: bool = False) -> bool:
        pool = self._pools[stream.model]
        with self._lock:
            if stream.released:
                return False
            stream.released = True
            stream.cancelled = cancelled
            if stream in pool.pending:
                pool.pending.remove(stream)
            pool.free.append(stream.slot)
            self.metrics.active_streams.labels(stream.model).set(pool.slots - len(pool.free))
        return True

    # -- the step loop (engine thread) -----------------------------------------------------------------------

    def _run(self) -> None:
        if self.threads:
            torch.set_num_threads(self.threads)
        torch.set_flush_denormal(True)  # decays underflow to denormals in long silences; they are slow on CPUs
        with torch.inference_mode():
            while self._running:
                self._wake.clear()
                worked = False
                for name, pool in self._pools.items():
                    self._admit(pool)
                    worked |= self._step_pool(name, pool)
                if not worked:
                    busy = any(pool.active for pool in self._pools.values())
                    # Paced streams become ready with the clock, not with a wake-up: poll them briefly.
                    self._wake.wait(0.002 if busy else self.idle_wait)

    def _admit(self, pool: _Pool) -> None:
        with self._lock:
            new, pool.pending = pool.pending, []
        if new:
            pool.state.reset_(torch.tensor([s.slot for s in new]))
            pool.active.extend(new)

    def _step_pool(self, name: str, pool: _Pool) -> bool:
        pool.active = [s for s in pool.active if not s.released]
        now = time.monotonic()
        ready = []
        for stream in pool.active:
            if not self._feed(name, stream):
                continue
            if stream.session.ready(now):
                if stream.ready_since is None:
                    stream.ready_since = now
                ready.append(stream)
        if ready:
            ready.sort(key=_priority)
            batch = _batch(ready, now, FRESH_ALONE_STEPS * pool.recent_step_s)
            self._run_batch(name, pool, batch[: self.max_batch])
        for stream in pool.active:
            if not stream.released and stream.session.finished() and self._release(stream):
                stream._deliver([_END])
        return bool(ready)

    def _feed(self, name: str, stream: Stream) -> bool:
        """Move queued inputs into the session. False if the input was rejected (the stream is ended)."""
        try:
            while stream._inbox:
                stream.session.push(stream._inbox.popleft())
        except ValueError as exc:
            self._fail(name, stream, StreamFailed(str(exc), client_error=True))
            return False
        return True

    def _run_batch(self, name: str, pool: _Pool, batch: list[Stream]) -> None:
        now = time.monotonic()
        m = self.metrics
        for stream in batch:
            deadline = stream.session.deadline()
            if stream.started and deadline is not None and now > deadline:
                m.underruns.labels(name).inc()
            m.queue_wait_seconds.labels(name).observe(now - (stream.ready_since or now))
            stream.ready_since = None
        rows = torch.tensor([s.slot for s in batch])
        try:
            state, events = pool.model.step(pool.state.gather(rows), [s.session for s in batch])
        except Exception:
            log.exception("model %s failed a step of %d streams", name, len(batch))
            for stream in batch:
                self._fail(name, stream, StreamFailed("internal error while generating", client_error=False))
            return
        elapsed = time.monotonic() - now
        m.step_seconds.labels(name).observe(elapsed)
        pool.recent_step_s += 0.2 * (elapsed - pool.recent_step_s)
        m.batch_size.labels(name).observe(len(batch))

        alive = [i for i, s in enumerate(batch) if not s.released]
        if len(alive) < len(batch):
            keep = torch.tensor(alive, dtype=torch.long)  # may be empty: every stream cancelled mid-step
            rows, state = rows[keep], state.gather(keep)
        pool.state.scatter_(rows, state)
        for stream, stream_events in zip(batch, events, strict=True):
            if stream_events and not stream.released:
                if not stream.started:
                    stream.started = True
                    m.first_output_seconds.labels(name).observe(time.monotonic() - stream.admitted_at)
                stream._deliver(stream_events)

    def _fail(self, name: str, stream: Stream, error: StreamFailed) -> None:
        if not error.client_error:
            self.metrics.stream_errors.labels(name).inc()
        if self._release(stream):
            stream._deliver([error, _END])


def _batch(ready: list[Stream], now: float, min_slack_s: float) -> list[Stream]:
    """The streams of the next step: `ready` in priority order, or only its new streams while every running
    stream has more than `min_slack_s` of audio buffered."""
    fresh = [s for s in ready if not s.started]
    if not fresh or len(fresh) == len(ready):
        return ready
    deadlines = [s.session.deadline() for s in ready if s.started]
    slack = min((d - now for d in deadlines if d is not None), default=float("inf"))
    return fresh if slack > min_slack_s else ready


def _priority(stream: Stream) -> tuple[int, float]:
    """New streams first (their first frame is what users wait for), then the most urgent deadline."""
    if not stream.started:
        return (0, stream.admitted_at)
    deadline = stream.session.deadline()
    return (1, deadline if deadline is not None else float("inf"))
