"""`POST /tts/bytes` (the audio file, streamed as it is made) and `POST /tts/sse` (server-sent events)."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from sonare.server import errors
from sonare.server.audio_out import CONTENT_TYPES
from sonare.server.bodies import read_json_object
from sonare.server.errors import ApiError, invalid, request_id_of
from sonare.server.service import Service
from sonare.server.tts_request import Control, Settings, parse_control, parse_settings, synthesis_options
from sonare.server.tts_stream import Audio, FlushAck, Output, Synthesis, Timestamps
from sonare.server.tts_text import strip_markup
from sonare.tts.messages import EndOfInput, TextPiece

STATUS_PARTIAL = 206
MAX_BODY = 1024 * 1024  # JSON requests; the transcript limit applies inside


async def start_synthesis(
    service: Service, body: dict[str, Any], route: str, containers: tuple[str, ...]
) -> tuple[Control, Settings, Synthesis, AsyncIterator[Output], list[Output]]:
    """Validate a whole-utterance request, admit it, and wait for its first output, so that a failure
    at the start is still answered with a proper HTTP status rather than a cut-off body."""
    started = time.monotonic()
    service.require_model("tts")
    control = parse_control(body, service.config.max_transcript_chars)
    text = strip_markup(control.transcript)
    if not text.strip():
        raise invalid("transcript must contain text to speak")
    settings = parse_settings(body, containers)
    assert service.voices is not None
    options = synthesis_options(settings, service.voices, service.default_voice_spec)
    stream = service.open_stream("tts", options)
    synthesis = Synthesis(stream, settings.output_format, service.metrics, route, started, settings.add_timestamps)
    stream.push(TextPiece(text))
    stream.push(EndOfInput())
    outputs = synthesis.outputs()
    first: list[Output] = []
    try:
        first.append(await anext(outputs))
    except StopAsyncIteration:
        pass
    except BaseException:
        stream.cancel()
        raise
    return control, settings, synthesis, outputs, first


async def tts_bytes(request: Request) -> Response:
    service: Service = request.app.state.service
    return await bytes_response(request, service, await read_json_object(request, MAX_BODY), "/tts/bytes")


async def bytes_response(request: Request, service: Service, body: dict[str, Any], route: str) -> Response:
    """The audio file for a whole-utterance request, streamed with chunked encoding as it is made."""
    _, settings, synthesis, outputs, first = await start_synthesis(service, body, route, ("raw", "wav", "mp3"))

    async def audio() -> AsyncIterator[bytes]:
        # A failure after the headers went out aborts the connection, so the client cannot mistake a
        # cut-off file for a complete one.
        try:
            yield synthesis.audio.header()
            async for out in _with_first(first, outputs):
                if isinstance(out, Audio):
                    yield out.data
        finally:
            synthesis.stream.cancel()

    container = settings.output_format.container
    return StreamingResponse(audio(), media_type=CONTENT_TYPES[container], headers=_headers(request))


async def tts_sse(request: Request) -> Response:
    service: Service = request.app.state.service
    body = await read_json_object(request, MAX_BODY)
    control, settings, synthesis, outputs, first = await start_synthesis(service, body, "/tts/sse", ("raw",))
    context = {"context_id": control.context_id} if control.context_id is not None else {}

    async def events() -> AsyncIterator[str]:
        try:
            async for out in _with_first(first, outputs):
                if not isinstance(out, FlushAck):
                    yield _sse(_payload(out) | context)
            yield _sse({"type": "done", "done": True, "status_code": STATUS_PARTIAL} | context)
        except ApiError as exc:
            yield _sse(errors.event(exc, request_id_of(request), control.context_id))
        finally:
            synthesis.stream.cancel()

    return StreamingResponse(events(), media_type="text/event-stream", headers=_headers(request))


def _payload(out: Audio | Timestamps) -> dict[str, Any]:
    if isinstance(out, Audio):
        return {
            "type": "chunk",
            "data": base64.b64encode(out.data).decode(),
            "done": False,
            "status_code": STATUS_PARTIAL,
            "step_time": round(out.step_time_ms, 3),
        }
    return {
        "type": "timestamps",
        "done": False,
        "status_code": STATUS_PARTIAL,
        "word_timestamps": {"words": out.words, "start": out.start, "end": out.end},
    }


def _sse(payload: dict[str, Any]) -> str:
    # No id: or retry: lines: once the SDK has seen an id it turns blank lines into empty events.
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n"


async def _with_first(first: list[Output], rest: AsyncIterator[Output]) -> AsyncIterator[Output]:
    for out in first:
        yield out
    async for out in rest:
        yield out


def _headers(request: Request) -> dict[str, str]:
    return {"X-Request-ID": request_id_of(request), "Cache-Control": "no-store"}
