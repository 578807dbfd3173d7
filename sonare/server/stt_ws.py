"""Streaming STT: `GET /stt/websocket` (transcripts; the client finalizes) and `GET /stt/turns/websocket`
(turn events from the model's end-of-turn decisions).

One engine stream per socket. A receive loop turns binary frames into audio and text commands into
control inputs; a forwarding task turns the stream's events into protocol messages and, when the stream
ends after `close`, closes the socket itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from sonare.engine import Stream, StreamFailed
from sonare.server import errors
from sonare.server.audio_in import PcmDecoder
from sonare.server.errors import ApiError, invalid, request_id_of
from sonare.server.service import Service, stream_error
from sonare.server.stt_request import AudioParams, audio_params, keyterms, silence_settings, turn_settings
from sonare.server.ws import accept
from sonare.stt.messages import (
    AudioIn,
    EndOfAudio,
    Finalize,
    Finalized,
    RecognitionOptions,
    Transcript,
    TurnConfig,
    TurnEvent,
    TurnSettings,
)

log = logging.getLogger(__name__)


def close_code(status: int) -> int:
    """WebSocket close code for an error status: try later (1013), server error (1011) or refused (1008)."""
    if status in (429, 503):
        return 1013
    return 1011 if status >= 500 else 1008


class SttSocket:
    def __init__(self, ws: WebSocket, service: Service, route: str = "/stt/websocket"):
        self.ws = ws
        self.service = service
        self.route = route  # metrics label
        self.request_id = request_id_of(ws)
        self._send_lock = asyncio.Lock()
        self.params: AudioParams | None = None

    # -- what differs between the two protocols -----------------------------------------------------------

    def turn_options(self, query: dict[str, str]) -> TurnSettings:
        """The session's turn settings from the query (this route's are VAD-style: `silence_settings`)."""
        return silence_settings(query)

    async def opened(self) -> None:
        """Sent once the stream is admitted."""

    def command(self, text: str) -> Any | None:
        """The stream input for a text frame, or None if the frame is not a command."""
        return {"finalize": Finalize(), "close": EndOfAudio(), "done": EndOfAudio()}.get(text.strip())

    async def on_event(self, event: Any) -> None:
        if isinstance(event, Transcript):
            if event.text.strip():
                await self.send(self._transcript(event))
        elif isinstance(event, Finalized):
            await self.send({"type": "flush_done", "request_id": self.request_id})

    async def on_end(self) -> None:
        await self.send({"type": "done", "request_id": self.request_id})

    # -- the shared session ---------------------------------------------------------------------------------

    async def serve(self) -> None:
        await accept(self.ws)
        gauge = self.service.metrics.websockets.labels(self.route)
        gauge.inc()
        try:
            stream = self._open()
        except ApiError as exc:
            await self._fail(exc)
            gauge.dec()
            return
        forward = asyncio.create_task(self._forward(stream), name=f"stt-{self.request_id}")
        try:
            await self.opened()
            await self._receive(stream)
        finally:
            stream.cancel()
            if not forward.done():
                forward.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await forward
            gauge.dec()

    def _open(self) -> Stream:
        self.service.require_model("stt")
        query = dict(self.ws.query_params)
        self.params = audio_params(query)
        turn = self.turn_options(query)
        terms = keyterms(self.ws.query_params.getlist("keyterm"))
        options = RecognitionOptions(self.params.sample_rate, self.params.language, turn=turn, keyterms=terms)
        return self.service.open_stream("stt", options)

    async def _receive(self, stream: Stream) -> None:
        assert self.params is not None
        decoder = PcmDecoder(self.params.encoding, self.params.sample_rate)
        received = self.service.metrics.audio_in_seconds.labels(self.route)
        ended = False
        while True:
            try:
                message = await asyncio.wait_for(self.ws.receive(), self.service.config.ws_idle_timeout)
            except TimeoutError:
                log.info("closing an STT socket idle for %.0f s", self.service.config.ws_idle_timeout)
                await self._close(1000)
                return
            if message["type"] == "websocket.disconnect":
                return
            if ended:
                continue  # after close the stream only finishes; late input is dropped
            if message.get("bytes") is not None:
                samples = decoder.push(message["bytes"])
                if len(samples):
                    stream.push(AudioIn(samples))
                    received.inc(len(samples) / self.params.sample_rate)
                continue
            try:
                item = self.command(message.get("text") or "")
            except ApiError as exc:  # a well-formed command with bad values: report it, keep the session
                await self.send(errors.event(exc, self.request_id, done=False))
                continue
            if item is None:
                error = invalid("unknown command; send binary audio, 'finalize' or 'close'")
                await self.send(errors.event(error, self.request_id, done=False))
                continue
            stream.push(item)
            ended = isinstance(item, EndOfAudio)

    async def _forward(self, stream: Stream) -> None:
        try:
            async for event in stream:
                await self.on_event(event)
            await self.on_end()
            await self._close(1000)
        except StreamFailed as exc:
            await self._fail(stream_error(exc))
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass  # the client went away

    def _transcript(self, event: Transcript) -> dict[str, Any]:
        assert self.params is not None
        return {
            "type": "transcript",
            "request_id": self.request_id,
            "is_final": event.is_final,
            "text": event.text,
            "duration": round(event.duration, 3),
            "language": self.params.language,
            "words": [{"word": w.word, "start": round(w.start, 3), "end": round(w.end, 3)} for w in event.words],
        }

    async def send(self, message: dict[str, Any]) -> None:
        async with self._send_lock:
            await self.ws.send_text(json.dumps(message))

    async def _fail(self, error: ApiError) -> None:
        log.info("STT socket error: %s", error.message, extra={"status": error.status})
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            await self.send(errors.event(error, self.request_id))
        await self._close(close_code(error.status))

    async def _close(self, code: int) -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, OSError):
            await self.ws.close(code)


class TurnsSocket(SttSocket):
    """Cumulative transcripts per turn, with turn.start / update / eager_end / resume / end."""

    def __init__(self, ws: WebSocket, service: Service, route: str = "/stt/turns/websocket"):
        super().__init__(ws, service, route)
        self.in_turn = False
        self.committed = ""  # final text of the current turn
        self.interim = ""  # the current guess for what follows it
        self.turn_query: dict[str, Any] = {}  # the session's turn settings so far, as `turn_`-prefixed values

    @property
    def turn_text(self) -> str:
        return self.committed + self.interim

    def turn_options(self, query: dict[str, str]) -> TurnSettings:
        settings = turn_settings(query)
        self.turn_query = {k: v for k, v in query.items() if k.startswith("turn_")}
        return settings

    async def opened(self) -> None:
        await self.send({"type": "connected", "request_id": self.request_id})

    def command(self, text: str) -> Any | None:
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            return None
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "config":
            turn = message.get("turn")
            if not isinstance(turn, dict):
                raise invalid("config needs a 'turn' object of settings")
            # The update is checked together with the settings already in force (start > eager_end > end).
            merged = self.turn_query | {f"turn_{key}": value for key, value in turn.items()}
            settings = turn_settings(merged)
            self.turn_query = merged
            return TurnConfig(settings)
        return {"close": EndOfAudio(), "finalize": Finalize()}.get(kind)

    async def on_event(self, event: Any) -> None:
        if isinstance(event, Finalized):
            return
        if isinstance(event, TurnEvent):
            if event.kind == "start":
                await self._start_turn()
            elif event.kind == "resume" and self.in_turn:
                await self._turn("turn.resume")
            elif event.kind == "eager_end" and self.in_turn:
                await self._turn("turn.eager_end", transcript=self.turn_text)
            elif event.kind == "end" and self.in_turn:
                await self._end_turn()
        elif isinstance(event, Transcript):
            if not event.text.strip() and not event.is_final:
                return
            await self._start_turn()  # a transcript always belongs to an open turn
            before = self.turn_text
            if event.is_final:
                self.committed += event.text
                self.interim = ""
            else:
                self.interim = event.text
            if self.turn_text != before and self.turn_text.strip():
                await self._turn("turn.update", transcript=self.turn_text)

    async def on_end(self) -> None:
        if self.in_turn:
            await self._end_turn()

    async def _start_turn(self) -> None:
        if not self.in_turn:
            self.in_turn, self.committed, self.interim = True, "", ""
            await self._turn("turn.start")

    async def _end_turn(self) -> None:
        await self._turn("turn.end", transcript=self.turn_text)
        self.in_turn, self.committed, self.interim = False, "", ""

    async def _turn(self, kind: str, **fields: Any) -> None:
        await self.send({"type": kind, **fields, "request_id": self.request_id})


async def stt_websocket(ws: WebSocket) -> None:
    await SttSocket(ws, ws.app.state.service).serve()


async def stt_turns_websocket(ws: WebSocket) -> None:
    await TurnsSocket(ws, ws.app.state.service).serve()
