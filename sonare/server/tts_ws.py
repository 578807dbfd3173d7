"""`GET /tts/websocket`: streaming TTS with many contexts per socket.

Each context is one utterance: its text arrives in pieces (`continue`), is buffered per
`max_buffer_delay_ms`, and feeds one engine stream; one task per context forwards that stream's audio,
timestamps and flush acknowledgements as JSON frames, then `done`. `cancel` drops a context at once and
sends nothing more for it. A single lock orders the frames of all contexts on the socket.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from sonare.engine import Stream
from sonare.server import errors
from sonare.server.errors import ApiError, invalid, request_id_of
from sonare.server.service import Service
from sonare.server.tts_request import parse_control, parse_settings, synthesis_options
from sonare.server.tts_stream import Audio, FlushAck, Synthesis, Timestamps
from sonare.server.tts_text import TextBuffer
from sonare.server.ws import accept
from sonare.tts.messages import EndOfInput, Flush, TextPiece

log = logging.getLogger(__name__)

ROUTE = "/tts/websocket"
STATUS_PARTIAL = 206


@dataclass
class Context:
    id: str
    stream: Stream
    synthesis: Synthesis
    buffer: TextBuffer
    chars: int = 0
    next_flush_id: int = 1
    ended: bool = False  # continue:false seen; the context finishes and then says `done`
    task: asyncio.Task | None = None
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)

    def push_text(self, text: str) -> None:
        if text:
            self.stream.push(TextPiece(text))

    def stop(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.stream.cancel()


class TtsSocket:
    def __init__(self, ws: WebSocket, service: Service, route: str = ROUTE):
        self.ws = ws
        self.service = service
        self.route = route
        self.request_id = request_id_of(ws)
        self.contexts: dict[str, Context] = {}
        self._send_lock = asyncio.Lock()
        self._closed = False

    async def serve(self) -> None:
        await accept(self.ws)
        gauge = self.service.metrics.websockets.labels(self.route)
        gauge.inc()
        try:
            await self._receive_loop()
        finally:
            self._closed = True
            for ctx in list(self.contexts.values()):
                self._drop(ctx)
            gauge.dec()

    async def _receive_loop(self) -> None:
        idle = self.service.config.ws_idle_timeout
        while True:
            try:
                if self.contexts:
                    message = await self.ws.receive()
                else:
                    message = await asyncio.wait_for(self.ws.receive(), idle)
            except TimeoutError:
                log.info("closing a TTS socket idle for %.0f s", idle)
                await self.ws.close(1000)
                return
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                await self._send_error(invalid("binary frames are not accepted here; send JSON text"), None, False)
                continue
            await self._handle(text)

    async def _handle(self, text: str) -> None:
        try:
            msg = json.loads(text)
        except json.JSONDecodeError as exc:
            await self._send_error(invalid(f"message is not valid JSON: {exc}"), None, False)
            return
        context_id = msg.get("context_id") if isinstance(msg, dict) else None
        context_id = context_id if isinstance(context_id, str) else None
        try:
            self._apply(msg)
        except ApiError as exc:
            ctx = self.contexts.get(context_id) if context_id else None
            if ctx is not None:
                self._drop(ctx)
            await self._send_error(exc, context_id, True)

    def _apply(self, msg: Any) -> None:
        control = parse_control(msg, self.service.config.max_transcript_chars)
        if control.context_id is None:
            raise invalid("context_id is required")
        ctx = self.contexts.get(control.context_id)
        if control.cancel:
            if ctx is not None:
                self._drop(ctx)
            return
        if ctx is None:
            if not control.more and not control.flush and not control.transcript.strip():
                # Nothing was ever said on this context: the terminator alone ends it.
                self._spawn_send(self._done_frame(control.context_id))
                return
            ctx = self._open(control.context_id, msg)
        elif ctx.ended:
            log.warning("ignoring a message for context %s, which is already finishing", ctx.id)
            return
        ctx.chars += len(control.transcript)
        if ctx.chars > self.service.config.max_transcript_chars:
            raise invalid(f"the context's text is longer than {self.service.config.max_transcript_chars} characters")
        ctx.push_text(ctx.buffer.add(control.transcript))
        if control.flush or not control.more:
            ctx.push_text(ctx.buffer.release_all())
        if control.flush:
            ctx.stream.push(Flush(ctx.next_flush_id))
            ctx.next_flush_id += 1
        if not control.more:
            ctx.stream.push(EndOfInput())
            ctx.ended = True
        self._schedule(ctx)

    def _open(self, context_id: str, msg: dict[str, Any]) -> Context:
        started = time.monotonic()
        self.service.require_model("tts")
        settings = parse_settings(msg, containers=("raw",))
        assert self.service.voices is not None
        options = synthesis_options(settings, self.service.voices, self.service.default_voice_spec)
        stream = self.service.open_stream("tts", options)
        delay = settings.max_buffer_delay_ms
        ctx = Context(
            id=context_id,
            stream=stream,
            synthesis=Synthesis(
                stream, settings.output_format, self.service.metrics, self.route, started, settings.add_timestamps
            ),
            buffer=TextBuffer(self.service.config.default_buffer_delay_ms if delay is None else delay),
        )
        self.contexts[context_id] = ctx
        ctx.task = asyncio.create_task(self._forward(ctx), name=f"tts-context-{context_id}")
        return ctx

    def _schedule(self, ctx: Context) -> None:
        """Keep a timer for the buffer's deadline, so waiting text goes out after max_buffer_delay_ms."""
        if ctx.timer is not None:
            ctx.timer.cancel()
            ctx.timer = None
        due = ctx.buffer.due()
        if due is not None and not ctx.ended:
            ctx.timer = asyncio.get_running_loop().call_later(max(0.0, due - time.monotonic()), self._timeout, ctx)

    def _timeout(self, ctx: Context) -> None:
        ctx.timer = None
        if self.contexts.get(ctx.id) is ctx:
            ctx.push_text(ctx.buffer.release_due())
            self._schedule(ctx)

    def _drop(self, ctx: Context) -> None:
        ctx.stop()
        if ctx.task is not None and ctx.task is not asyncio.current_task():
            ctx.task.cancel()
        if self.contexts.get(ctx.id) is ctx:
            del self.contexts[ctx.id]

    async def _forward(self, ctx: Context) -> None:
        """Send one context's output, then `done` (or an error); the context is gone afterwards."""
        try:
            async for out in ctx.synthesis.outputs():
                await self._send(self._frame(ctx.id, out))
            await self._send(self._done_frame(ctx.id))
        except ApiError as exc:
            await self._send_error(exc, ctx.id, True)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass  # the client went away; the receive loop cleans up
        finally:
            self._drop(ctx)

    def _frame(self, context_id: str, out: Audio | Timestamps | FlushAck) -> dict[str, Any]:
        frame: dict[str, Any] = {"context_id": context_id, "done": False, "status_code": STATUS_PARTIAL}
        if isinstance(out, Audio):
            frame.update(
                type="chunk",
                data=base64.b64encode(out.data).decode(),
                step_time=round(out.step_time_ms, 3),
                flush_id=out.flush_id,
            )
        elif isinstance(out, Timestamps):
            frame.update(
                type="timestamps",
                flush_id=out.flush_id,
                word_timestamps={"words": out.words, "start": out.start, "end": out.end},
            )
        else:
            frame.update(type="flush_done", flush_done=True, flush_id=out.flush_id)
        return frame

    def _done_frame(self, context_id: str) -> dict[str, Any]:
        return {"type": "done", "context_id": context_id, "done": True, "status_code": STATUS_PARTIAL}

    def _spawn_send(self, frame: dict[str, Any]) -> None:
        asyncio.create_task(self._send_quietly(frame))

    async def _send_quietly(self, frame: dict[str, Any]) -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            await self._send(frame)

    async def _send_error(self, error: ApiError, context_id: str | None, done: bool) -> None:
        log.info("TTS socket error: %s", error.message, extra={"context_id": context_id, "status": error.status})
        await self._send_quietly(errors.event(error, self.request_id, context_id, done=done))

    async def _send(self, frame: dict[str, Any]) -> None:
        async with self._send_lock:
            if not self._closed:
                await self.ws.send_text(json.dumps(frame))


async def tts_websocket(ws: WebSocket) -> None:
    await TtsSocket(ws, ws.app.state.service).serve()
