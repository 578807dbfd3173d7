"""`POST /stt`: batch transcription of an uploaded file (wav, mp3, ogg, flac, ... or raw PCM)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import soundfile as sf
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from sonare.audio.io import decode_audio
from sonare.audio.resample import resample
from sonare.engine import StreamFailed
from sonare.server.audio_in import INPUT_ENCODINGS, MAX_RATE, MIN_RATE, decode_pcm
from sonare.server.bodies import read_body
from sonare.server.errors import invalid, request_id_of
from sonare.server.service import Service, stream_error
from sonare.server.stt_request import audio_params, language_code
from sonare.stt.messages import AudioIn, EndOfAudio, RecognitionOptions, Transcript, Word

CHUNK_SECONDS = 0.5  # audio goes to the model in pieces, as a stream would deliver it
MAX_FORM_FIELD = 64 * 1024


@dataclass
class ClipTranscript:
    text: str
    duration: float
    words: list[Word] = field(default_factory=list)


async def transcribe_clip(
    service: Service, samples: np.ndarray, sample_rate: int, language: str, route: str
) -> ClipTranscript:
    """Run a whole clip through a streaming STT session and join its final transcripts."""
    if not MIN_RATE <= sample_rate <= MAX_RATE:
        samples, sample_rate = resample(samples, sample_rate, 16000), 16000
    stream = service.open_stream("stt", RecognitionOptions(sample_rate, language, turn_detection=False))
    finals: list[Transcript] = []
    try:
        step = max(1, int(CHUNK_SECONDS * sample_rate))
        for i in range(0, len(samples), step):
            stream.push(AudioIn(samples[i : i + step]))
        stream.push(EndOfAudio())
        async for event in stream:
            if isinstance(event, Transcript) and event.is_final:
                finals.append(event)
    except StreamFailed as exc:
        raise stream_error(exc) from exc
    finally:
        stream.cancel()
    duration = len(samples) / sample_rate
    service.metrics.audio_in_seconds.labels(route).inc(duration)
    text = "".join(t.text for t in finals).strip()
    return ClipTranscript(text, duration, [w for t in finals for w in t.words])


def decode_upload(data: bytes, encoding: str | None, sample_rate: str | None) -> tuple[np.ndarray, int]:
    """Raw PCM when an encoding is given, otherwise an audio file in any format libsndfile reads."""
    if not data:
        raise invalid("the audio file is empty")
    if encoding is not None:
        params = audio_params({"encoding": encoding, "sample_rate": sample_rate or ""})
        width = INPUT_ENCODINGS[params.encoding]
        return decode_pcm(data[: len(data) - len(data) % width], params.encoding), params.sample_rate
    try:
        return decode_audio(data)
    except (sf.LibsndfileError, RuntimeError, ValueError) as exc:
        raise invalid(f"could not decode the audio file ({exc}); for raw PCM pass encoding and sample_rate") from exc


async def parse_form(request: Request, limit: int) -> dict[str, list[str | UploadFile]]:
    data = await read_body(request, limit)

    async def body() -> AsyncIterator[bytes]:
        yield data

    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise invalid("the body must be multipart/form-data with the audio in a 'file' field")
    try:
        form = await MultiPartParser(request.headers, body(), max_part_size=MAX_FORM_FIELD).parse()
    except MultiPartException as exc:
        raise invalid(f"malformed multipart body: {exc.message}") from exc
    fields: dict[str, list[str | UploadFile]] = {}
    for key, value in form.multi_items():
        fields.setdefault(key, []).append(value)
    return fields


async def transcribe(request: Request) -> Response:
    service: Service = request.app.state.service
    service.require_model("stt")
    fields = await parse_form(request, service.config.max_upload_bytes)
    upload = (fields.get("file") or [None])[0]
    if not isinstance(upload, UploadFile):
        raise invalid("the 'file' field with the audio is required")
    language = language_code(_text(fields, "language"))
    granularities = [v for v in fields.get("timestamp_granularities[]", []) if isinstance(v, str)]
    samples, rate = decode_upload(
        await upload.read(), request.query_params.get("encoding"), request.query_params.get("sample_rate")
    )
    result = await transcribe_clip(service, samples, rate, language, "/stt")
    return JSONResponse(response_body(result, language, request_id_of(request), words="word" in granularities))


def response_body(result: ClipTranscript, language: str, request_id: str, words: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "transcript",
        "text": result.text,
        "is_final": True,
        "language": language,
        "duration": round(result.duration, 3),
        "request_id": request_id,
    }
    if words:
        body["words"] = [{"word": w.word, "start": round(w.start, 3), "end": round(w.end, 3)} for w in result.words]
    return body


def _text(fields: dict[str, list[str | UploadFile]], name: str) -> str | None:
    value = (fields.get(name) or [None])[0]
    if value is not None and not isinstance(value, str):
        raise invalid(f"{name} must be a form field, not a file")
    return value
