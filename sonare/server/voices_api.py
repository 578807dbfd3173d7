"""Voices: list with id cursors (`GET /voices` and `/voices/`), get, update and delete one, clone from a clip
(`POST /voices/clone`), and the legacy embedding endpoints (`POST /voices/` create, `/voices/mix`,
`/voices/clone/clip`). Voice objects carry the union of the fields old and new SDKs read."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from sonare.server.bodies import read_json_object
from sonare.server.errors import ApiError, invalid
from sonare.server.service import Service
from sonare.server.stt_request import language_code
from sonare.server.uploads import decode_upload, form_text, parse_form
from sonare.voices.encoder import CloneError
from sonare.voices.library import BuiltinVoice, UnknownCursor, Voice, VoiceFilter, VoiceLibrary

DEFAULT_LIMIT = 10
MAX_LIMIT = 100
GENDERS = ("masculine", "feminine", "gender_neutral")
MAX_NAME = 200
MAX_DESCRIPTION = 2000


def voice_json(voice: Voice, expand: list[str]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": voice.id,
        "name": voice.name,
        "description": voice.description,
        "language": voice.language,
        "gender": voice.gender if voice.gender in GENDERS else None,
        "created_at": voice.created_at,
        "is_owner": not voice.builtin,
        "is_public": voice.builtin,
        "user_id": None if voice.builtin else "local",
        "access": "public" if voice.builtin else "private",
        "visibility": "all" if voice.builtin else "owner",
        "tagline": "",
        "locales": [{"locale": voice.language, "is_native": True}],
    }
    if "embedding" in expand:
        body["embedding"] = [float(x) for x in voice.embedding]
    return body


def _library(request: Request) -> VoiceLibrary:
    service: Service = request.app.state.service
    if service.voices is None:
        raise ApiError(503, "not_ready", "the voice library is still loading", title="Not ready")
    return service.voices


def _expand(request: Request) -> list[str]:
    return request.query_params.getlist("expand[]") + request.query_params.getlist("expand")


async def list_voices(request: Request) -> Response:
    library = _library(request)
    q = request.query_params
    limit_text = q.get("limit", str(DEFAULT_LIMIT))
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIMIT:
        raise invalid(f"limit must be an integer between 1 and {MAX_LIMIT}")
    if q.get("starting_after") and q.get("ending_before"):
        raise invalid("use starting_after or ending_before, not both")
    is_owner = q.get("is_owner")
    if is_owner is not None and is_owner.lower() not in ("true", "false"):
        raise invalid("is_owner must be true or false")
    where = VoiceFilter(
        q=q.get("q") or None,
        gender=q.get("gender") or None,
        is_owner=None if is_owner is None else is_owner.lower() == "true",
    )
    try:
        voices, has_more = library.page(
            int(limit_text), q.get("starting_after") or None, q.get("ending_before") or None, where
        )
    except UnknownCursor as exc:
        raise invalid(f"no voice with id {exc.args[0]!r} to page from") from exc
    expand = _expand(request)
    return JSONResponse(
        {
            "data": [voice_json(v, expand) for v in voices],
            "has_more": has_more,
            "next_page": voices[-1].id if has_more and voices else None,
        }
    )


def _not_found(voice_id: str) -> ApiError:
    return ApiError(404, "voice_not_found", f"no voice with id {voice_id!r}", title="Voice not found")


def _builtin(voice_id: str) -> ApiError:
    return ApiError(403, "forbidden", f"{voice_id!r} is a built-in voice: it cannot be changed", title="Forbidden")


async def get_voice(request: Request) -> Response:
    voice_id = request.path_params["voice_id"]
    voice = _library(request).get(voice_id)
    if voice is None:
        raise _not_found(voice_id)
    return JSONResponse(voice_json(voice, _expand(request)))


async def update_voice(request: Request) -> Response:
    """PATCH: name, description and gender of a stored voice (`accent` is accepted and has no effect)."""
    library = _library(request)
    voice_id = request.path_params["voice_id"]
    body = await read_json_object(request, 64 * 1024)
    name, description, gender = body.get("name"), body.get("description"), body.get("gender")
    if name is not None:
        _check_name(name)
    if description is not None:
        _check_description(description)
    if gender is not None and gender not in GENDERS:
        raise invalid(f"gender must be one of {', '.join(GENDERS)}")
    try:
        voice = library.update(voice_id, name, description, gender)
    except BuiltinVoice as exc:
        raise _builtin(voice_id) from exc
    if voice is None:
        raise _not_found(voice_id)
    return JSONResponse(voice_json(voice, []))


async def delete_voice(request: Request) -> Response:
    voice_id = request.path_params["voice_id"]
    try:
        deleted = _library(request).delete(voice_id)
    except BuiltinVoice as exc:
        raise _builtin(voice_id) from exc
    if not deleted:
        raise _not_found(voice_id)
    return Response(status_code=204)


async def _clip_embedding(request: Request, fields: dict[str, list[str | UploadFile]]) -> np.ndarray:
    """The voice embedding of the form's `clip` (any audio format), measured off the event loop."""
    service: Service = request.app.state.service
    service.require_model("tts")
    if service.cloner is None:
        raise ApiError(501, "not_implemented", "the loaded TTS model has no voice to clone from", title="Not cloneable")
    upload = (fields.get("clip") or [None])[0]
    if not isinstance(upload, UploadFile):
        raise invalid("the 'clip' field with the audio to clone is required")
    samples, rate = decode_upload(await upload.read(), None, None)
    try:
        return await asyncio.to_thread(service.cloner.embed, samples, rate)
    except CloneError as exc:
        raise ApiError(422, "unusable_clip", str(exc), title="Clip cannot be cloned") from exc


async def clone_voice(request: Request) -> Response:
    """Clone a voice from a clip (multipart: clip, name, language, description) and store it."""
    library = _library(request)
    fields = await parse_form(request, request.app.state.service.config.max_upload_bytes, "clip")
    name, description = form_text(fields, "name"), form_text(fields, "description") or ""
    _check_name(name)
    _check_description(description)
    language = language_code(form_text(fields, "language"))
    embedding = await _clip_embedding(request, fields)
    voice = library.add(name, embedding, language, description, source="clone")
    return JSONResponse(voice_json(voice, []), status_code=200)


async def clone_clip(request: Request) -> Response:
    """Legacy: the embedding of a clip, stored nowhere."""
    fields = await parse_form(request, request.app.state.service.config.max_upload_bytes, "clip")
    embedding = await _clip_embedding(request, fields)
    return JSONResponse({"embedding": [float(x) for x in embedding]})


async def mix_voices(request: Request) -> Response:
    """Legacy: a weighted blend of voices, each given by id or by embedding (weights are normalised)."""
    library = _library(request)
    body = await read_json_object(request, 1024 * 1024)
    parts = body.get("voices")
    if not isinstance(parts, list) or not 1 <= len(parts) <= 32:
        raise invalid("voices must be a list of 1-32 {id or embedding, weight} objects")
    vectors, weights = [], []
    for part in parts:
        if not isinstance(part, dict):
            raise invalid("each voice to mix must be an object")
        weight = part.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight < float("inf"):
            raise invalid("weight must be a non-negative number")
        if "id" in part:
            voice = library.get(part["id"]) if isinstance(part["id"], str) else None
            if voice is None:
                raise _not_found(str(part["id"]))
            vector = _embedding(voice.embedding.tolist(), library)
        else:
            vector = _embedding(part.get("embedding"), library)
        vectors.append(vector)
        weights.append(float(weight))
    if sum(weights) <= 0:
        raise invalid("at least one weight must be positive")
    mixed = np.average(np.stack(vectors), axis=0, weights=weights)
    return JSONResponse({"embedding": [float(x) for x in mixed]})


def _embedding(value: Any, library: VoiceLibrary) -> np.ndarray:
    if not isinstance(value, list) or any(isinstance(x, bool) or not isinstance(x, int | float) for x in value):
        raise invalid("embedding must be a list of numbers")
    vector = np.asarray(value, dtype=np.float64)
    if library.embedding_dim is not None and len(vector) != library.embedding_dim:
        raise invalid(f"embedding must have {library.embedding_dim} values, not {len(vector)}")
    if not np.isfinite(vector).all():
        raise invalid("embedding values must be finite numbers")
    return vector


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not 0 < len(name.strip()) <= MAX_NAME:
        raise invalid(f"name must be a string of 1-{MAX_NAME} characters")


def _check_description(description: Any) -> None:
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        raise invalid(f"description must be a string of at most {MAX_DESCRIPTION} characters")


async def create_voice(request: Request) -> Response:
    """Legacy create: store a voice from a speaker embedding (e.g. from a mix or an earlier clone)."""
    library = _library(request)
    body = await read_json_object(request, 1024 * 1024)
    name, description = body.get("name"), body.get("description", "")
    _check_name(name)
    _check_description(description)
    gender = body.get("gender")
    if gender is not None and gender not in GENDERS:
        raise invalid(f"gender must be one of {', '.join(GENDERS)}")
    language = body.get("language")
    if language is not None and not isinstance(language, str):
        raise invalid("language must be a string")
    embedding = _embedding(body.get("embedding"), library)
    voice = library.add(name, embedding, language_code(language), description, gender)
    return JSONResponse(voice_json(voice, []), status_code=200)
