"""Reading request bodies within the configured size limit."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from sonare.server.errors import ApiError, invalid


def too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"the request body is larger than {limit} bytes")


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refusing at once when Content-Length is over `limit` and as soon as a streamed
    (chunked) body passes it."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(data: bytes | str) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise invalid(f"the body is not valid JSON: {exc}") from exc


async def read_json_object(request: Request, limit: int) -> dict[str, Any]:
    value = parse_json(await read_body(request, limit))
    if not isinstance(value, dict):
        raise invalid("the body must be a JSON object")
    return value
