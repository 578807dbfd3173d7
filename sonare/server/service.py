"""The running server's state, separate from any transport: configuration, models, the engine, voices,
metrics, readiness and drain. Routes reach it as `request.app.state.service`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from typing import Any

import numpy as np
from prometheus_client import CollectorRegistry

from sonare.engine import Engine, EngineClosed, EngineFull, EngineMetrics, Stream, StreamFailed
from sonare.server.auth import Authenticator
from sonare.server.config import ServerConfig
from sonare.server.errors import ApiError
from sonare.server.metrics import ServerMetrics
from sonare.server.models import LoadedModels, load_models
from sonare.stt.messages import AudioIn, EndOfAudio, RecognitionOptions
from sonare.tts.messages import EndOfInput, SynthesisOptions, TextPiece, VoiceSpec
from sonare.voices.encoder import SpeakerEncoder
from sonare.voices.library import VoiceLibrary

log = logging.getLogger(__name__)

MODEL_ROUTES = {"tts": "text-to-speech", "stt": "speech-to-text"}


class Service:
    def __init__(self, config: ServerConfig):
        self.config = config
        self.registry = CollectorRegistry()
        self.engine_metrics = EngineMetrics(self.registry)
        self.metrics = ServerMetrics(self.registry)
        self.auth = Authenticator(config.api_keys)
        self.engine: Engine | None = None
        self.loaded = LoadedModels()
        self.voices: VoiceLibrary | None = None
        self.cloner: SpeakerEncoder | None = None  # None: the TTS model has no voice to clone from
        self.ready = False
        self.draining = False
        self.failed: str | None = None  # why start-up failed, if it did
        self._ready_event = asyncio.Event()
        self._inflight_http = 0

    # -- lifecycle ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start up in the background of a listening server, recording a failure for `/live`."""
        try:
            await self._start()
        except Exception as exc:
            log.exception("start-up failed")
            self.failed = f"{type(exc).__name__}: {exc}"

    async def _start(self) -> None:
        """Load and warm the models (off the event loop), then report ready."""
        self.loaded = await asyncio.to_thread(load_models, self.config)
        self.voices = VoiceLibrary(self.config.data_dir / "voices.sqlite3", self.loaded.builtin_voices)
        if any(v.get("profile") for v in self.loaded.builtin_voices):
            self.cloner = SpeakerEncoder(self.loaded.builtin_voices)
        slots = {"tts": self.config.tts_slots, "stt": self.config.stt_slots}
        self.engine = Engine(
            self.loaded.models,
            slots={k: slots[k] for k in self.loaded.models},
            max_batch=self.config.max_batch,
            # Leave a core to the event loop: it encodes and sends every stream's audio.
            threads=self.config.threads or max(1, (os.cpu_count() or 2) - 1),
            metrics=self.engine_metrics,
        )
        self.engine.start()
        for kind in list(self.loaded.models):
            try:
                await self._warm_up(kind)
            except Exception as exc:  # a model that cannot run a short stream must not take traffic
                log.exception("warm-up of the %s model failed; its routes answer 503", kind)
                self.loaded.missing[kind] = f"warm-up failed: {exc}"
                del self.loaded.models[kind]
        self.ready = True
        self.metrics.ready.set(1)
        self._ready_event.set()
        log.info("ready", extra={"models": sorted(self.loaded.models), "missing": self.loaded.missing})

    async def wait_ready(self) -> None:
        await self._ready_event.wait()

    async def stop(self) -> None:
        self.ready = False
        self.metrics.ready.set(0)
        if self.engine is not None:
            await asyncio.to_thread(self.engine.stop)
        if self.voices is not None:
            self.voices.close()

    async def _warm_up(self, kind: str) -> None:
        """Run one short stream through the model so first requests do not pay for lazy initialisation."""
        assert self.engine is not None
        t0 = time.monotonic()
        if kind == "tts":
            options: Any = SynthesisOptions(voice=self.default_voice_spec())
            inputs: list[Any] = [TextPiece("Hello."), EndOfInput()]
        else:
            options = RecognitionOptions(sample_rate=16000)
            inputs = [AudioIn(np.zeros(8000, dtype=np.float32)), EndOfAudio()]
        stream = self.engine.open(kind, options)
        try:
            for item in inputs:
                stream.push(item)
            async with asyncio.timeout(60):
                async for _ in stream:
                    pass
        finally:
            stream.cancel()
        log.info("warmed up the %s model in %.2f s", kind, time.monotonic() - t0)

    # -- drain -------------------------------------------------------------------------------------------

    def begin_drain(self) -> None:
        """Stop admitting and report not ready; streams already running continue."""
        if self.draining:
            return
        self.draining = True
        self.ready = False
        self.metrics.ready.set(0)
        self.metrics.draining.set(1)
        if self.engine is not None:
            self.engine.stop_admitting()
        log.info("draining: new streams are refused, in-flight streams finish")

    def busy(self) -> int:
        """Streams and HTTP requests still in flight."""
        streams = self.engine.active_streams() if self.engine is not None else 0
        return streams + self._inflight_http

    async def drain(self, timeout: float) -> bool:
        """Wait until nothing is in flight or `timeout` passes; True if everything finished."""
        self.begin_drain()
        deadline = time.monotonic() + timeout
        while self.busy() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        remaining = self.busy()
        log.info("drain finished", extra={"unfinished": remaining})
        return remaining == 0

    @contextlib.contextmanager
    def http_request(self):
        self._inflight_http += 1
        try:
            yield
        finally:
            self._inflight_http -= 1

    # -- admission ---------------------------------------------------------------------------------------

    def require_model(self, kind: str) -> None:
        if not self.ready and not self.draining:
            raise ApiError(503, "not_ready", "the server is still loading its models", title="Not ready")
        if kind not in self.loaded.models:
            why = self.loaded.missing.get(kind, "not configured")
            raise ApiError(
                503,
                "model_not_found",
                f"no {MODEL_ROUTES[kind]} model is loaded on this server ({why})",
                title="Model not available",
            )

    def open_stream(self, kind: str, options: Any) -> Stream:
        """Admit a stream or raise the ApiError the client should see."""
        self.require_model(kind)
        assert self.engine is not None
        try:
            return self.engine.open(kind, options)
        except EngineFull as exc:
            raise ApiError(
                429,
                "concurrency_limited",
                f"the server is at capacity ({exc.slots} concurrent {kind} streams); retry shortly",
                headers={"Retry-After": str(self.config.retry_after_s)},
            ) from exc
        except EngineClosed as exc:
            raise ApiError(
                503,
                "server_draining",
                "the server is shutting down and accepts no new streams",
                headers={"Retry-After": str(self.config.retry_after_s)},
            ) from exc
        except ValueError as exc:
            raise ApiError(400, "invalid_request", str(exc)) from exc

    def default_voice_spec(self) -> VoiceSpec:
        assert self.voices is not None
        voice_id = self.config.default_voice or next(iter(self.loaded.builtin_voices), {}).get("id")
        voice = self.voices.get(voice_id) if voice_id else None
        if voice is None:
            raise ApiError(400, "invalid_request", "voice is required (this server has no default voice)")
        return VoiceSpec(id=voice.id, embedding=tuple(voice.embedding.tolist()))


def stream_error(exc: StreamFailed) -> ApiError:
    if exc.client_error:
        return ApiError(400, "invalid_request", str(exc))
    return ApiError(500, "internal_error", str(exc))
