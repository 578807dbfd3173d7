"""Voices: list with id cursors (`GET /voices` and `/voices/`), get one, and the legacy create from an
embedding (`POST /voices/`). Voice objects carry the union of the fields old and new SDKs read."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from sonare.server.bodies import read_json_object
from sonare.server.errors import ApiError, invalid
from sonare.server.service import Service
from sonare.server.stt_request import language_code
from sonare.voices.library import UnknownCursor, Voice, VoiceFilter, VoiceLibrary

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


async def get_voice(request: Request) -> Response:
    voice_id = request.path_params["voice_id"]
    voice = _library(request).get(voice_id)
    if voice is None:
        raise ApiError(404, "voice_not_found", f"no voice with id {voice_id!r}", title="Voice not found")
    return JSONResponse(voice_json(voice, _expand(request)))


async def create_voice(request: Request) -> Response:
    """Legacy create: store a voice from a speaker embedding (e.g. from a mix or an earlier clone)."""
    library = _library(request)
    body = await read_json_object(request, 1024 * 1024)
    name, description = body.get("name"), body.get("description", "")
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME:
        raise invalid(f"name must be a string of 1-{MAX_NAME} characters")
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        raise invalid(f"description must be a string of at most {MAX_DESCRIPTION} characters")
    gender = body.get("gender")
    if gender is not None and gender not in GENDERS:
        raise invalid(f"gender must be one of {', '.join(GENDERS)}")
    language = body.get("language")
    if language is not None and not isinstance(language, str):
        raise invalid("language must be a string")
    embedding = body.get("embedding")
    if not isinstance(embedding, list) or any(isinstance(x, bool) or not isinstance(x, int | float) for x in embedding):
        raise invalid("embedding must be a list of numbers")
    try:
        voice = library.add(name, embedding, language_code(language), description, gender)
    except ValueError as exc:
        raise invalid(str(exc)) from exc
    return JSONResponse(voice_json(voice, []), status_code=200)
