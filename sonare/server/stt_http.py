"""`POST /stt`: batch transcription of an uploaded file (wav, mp3, ogg, flac, ... or raw PCM)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from sonare.audio.resample import resample
from sonare.engine import StreamFailed
from sonare.server.audio_in import MAX_RATE, MIN_RATE
from sonare.server.errors import invalid, request_id_of
from sonare.server.service import Service, stream_error
from sonare.server.stt_request import language_code
from sonare.server.uploads import decode_upload, form_text, parse_form
from sonare.stt.messages import AudioIn, EndOfAudio, RecognitionOptions, Transcript, Word

CHUNK_SECONDS = 0.5  # audio goes to the model in pieces, as a stream would deliver it


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


async def transcribe(request: Request) -> Response:
    service: Service = request.app.state.service
    service.require_model("stt")
    fields = await parse_form(request, service.config.max_upload_bytes, "file")
    upload = (fields.get("file") or [None])[0]
    if not isinstance(upload, UploadFile):
        raise invalid("the 'file' field with the audio is required")
    language = language_code(form_text(fields, "language"))
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
