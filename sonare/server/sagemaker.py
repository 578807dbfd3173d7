"""The SageMaker container contract: `GET /ping`, `POST /invocations`, and the WebSocket
`/invocations-bidirectional-stream`, each mapped onto the Cartesia-compatible routes.

`/invocations` picks the work from the body: JSON with a `transcript` is TTS (the `/tts/bytes` request;
audio streams back with chunked encoding); JSON with base64 `audio`, a multipart upload, or an audio
body is batch STT. The bidirectional stream speaks the TTS WebSocket protocol, or with
`protocol=stt` / `protocol=stt-turns` in its query (SageMaker's `ModelQueryString`) one of the STT ones.
"""

from __future__ import annotations

import base64
import binascii
import json

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.websockets import WebSocket

from sonare.server import errors, health, stt_http, tts_http
from sonare.server.bodies import parse_json, read_body
from sonare.server.errors import invalid, request_id_of
from sonare.server.service import Service
from sonare.server.stt_request import language_code
from sonare.server.stt_ws import SttSocket, TurnsSocket
from sonare.server.tts_ws import TtsSocket
from sonare.server.uploads import decode_upload
from sonare.server.ws import accept

ROUTE = "/invocations"
BIDI_ROUTE = "/invocations-bidirectional-stream"


async def ping(request: Request) -> Response:
    """SageMaker's health check: 200 once the models are loaded and warm."""
    return await health.ready(request)


async def invocations(request: Request) -> Response:
    service: Service = request.app.state.service
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "multipart/form-data":
        return await stt_http.transcribe(request)
    if content_type == "application/json":
        body = await read_body(request, service.config.max_upload_bytes)
        request_json = parse_json(body)
        if not isinstance(request_json, dict):
            raise invalid("the body must be a JSON object")
        if "transcript" in request_json:
            if len(body) > tts_http.MAX_BODY:
                raise invalid(f"a TTS request must be under {tts_http.MAX_BODY} bytes")
            return await tts_http.bytes_response(request, service, request_json, ROUTE)
        if "audio" in request_json:
            return await _transcribe_json(request, service, request_json)
        raise invalid("a JSON invocation needs 'transcript' (speech synthesis) or 'audio' (transcription)")
    # Any other body is an audio file (or raw PCM, described by the query) to transcribe.
    service.require_model("stt")
    data = await read_body(request, service.config.max_upload_bytes)
    query = request.query_params
    samples, rate = decode_upload(data, query.get("encoding"), query.get("sample_rate"))
    language = language_code(query.get("language"))
    result = await stt_http.transcribe_clip(service, samples, rate, language, ROUTE)
    return JSONResponse(stt_http.response_body(result, language, request_id_of(request), words=True))


async def _transcribe_json(request: Request, service: Service, body: dict) -> Response:
    service.require_model("stt")
    audio = body["audio"]
    if not isinstance(audio, str):
        raise invalid("audio must be a base64 string")
    try:
        data = base64.b64decode(audio, validate=True)
    except binascii.Error as exc:
        raise invalid("audio is not valid base64") from exc
    encoding, rate = body.get("encoding"), body.get("sample_rate")
    if encoding is not None and not isinstance(encoding, str):
        raise invalid("encoding must be a string")
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, int)):
        raise invalid("sample_rate must be an integer")
    language = body.get("language")
    if language is not None and not isinstance(language, str):
        raise invalid("language must be a string")
    samples, sample_rate = decode_upload(data, encoding, None if rate is None else str(rate))
    language = language_code(language)
    result = await stt_http.transcribe_clip(service, samples, sample_rate, language, ROUTE)
    return JSONResponse(stt_http.response_body(result, language, request_id_of(request), words=True))


async def bidirectional_stream(ws: WebSocket) -> None:
    service: Service = ws.app.state.service
    protocol = ws.query_params.get("protocol", "tts")
    if protocol == "tts":
        await TtsSocket(ws, service, route=BIDI_ROUTE).serve()
    elif protocol == "stt":
        await SttSocket(ws, service, route=BIDI_ROUTE).serve()
    elif protocol == "stt-turns":
        await TurnsSocket(ws, service, route=BIDI_ROUTE).serve()
    else:
        await accept(ws)
        error = invalid("protocol must be tts, stt or stt-turns")
        await ws.send_text(json.dumps(errors.event(error, request_id_of(ws))))
        await ws.close(1008)
