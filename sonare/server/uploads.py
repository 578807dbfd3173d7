"""Uploaded audio: multipart/form-data bodies and the audio files or raw PCM in them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import numpy as np
import soundfile as sf
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request

from sonare.audio.io import decode_audio
from sonare.server.audio_in import INPUT_ENCODINGS, decode_pcm
from sonare.server.bodies import read_body
from sonare.server.errors import invalid
from sonare.server.stt_request import audio_params

MAX_FORM_FIELD = 64 * 1024


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


async def parse_form(request: Request, limit: int, file_field: str) -> dict[str, list[str | UploadFile]]:
    """The fields of a multipart/form-data body of at most `limit` bytes, each name with its values."""
    data = await read_body(request, limit)

    async def body() -> AsyncIterator[bytes]:
        yield data

    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise invalid(f"the body must be multipart/form-data with the audio in a {file_field!r} field")
    try:
        form = await MultiPartParser(request.headers, body(), max_part_size=MAX_FORM_FIELD).parse()
    except MultiPartException as exc:
        raise invalid(f"malformed multipart body: {exc.message}") from exc
    fields: dict[str, list[str | UploadFile]] = {}
    for key, value in form.multi_items():
        fields.setdefault(key, []).append(value)
    return fields


def form_text(fields: dict[str, list[str | UploadFile]], name: str) -> str | None:
    """A text field's first value, or None when absent."""
    value = (fields.get(name) or [None])[0]
    if value is not None and not isinstance(value, str):
        raise invalid(f"{name} must be a form field, not a file")
    return value
