"""The error shapes of the wire protocol: an HTTP JSON body, and the event sent on sockets and SSE."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

TITLES = {
    400: "Invalid request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    413: "Payload too large",
    422: "Unprocessable content",
    429: "Too many concurrent requests",
    500: "Internal server error",
    501: "Not implemented",
    503: "Service unavailable",
}


class ApiError(Exception):
    """An error to report to the client in the protocol's shape."""

    def __init__(
        self,
        status: int,
        error_code: str,
        message: str,
        title: str | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message
        self.title = title or TITLES.get(status, "Error")
        self.headers = headers or {}


def invalid(message: str) -> ApiError:
    return ApiError(400, "invalid_request", message)


def http_body(error: ApiError, request_id: str) -> dict[str, Any]:
    return {
        "error_code": error.error_code,
        "title": error.title,
        "message": error.message,
        "request_id": request_id,
    }


def event(error: ApiError, request_id: str, context_id: str | None = None, done: bool = True) -> dict[str, Any]:
    """The error event for sockets and SSE, with the extras older clients read: `error` (SDK 2.x, TTS)
    and `code` (livekit, STT) mirroring `status_code`. `context_id` is always present because pipecat
    indexes it on every TTS frame."""
    return {
        "type": "error",
        "done": done,
        "status_code": error.status,
        "code": error.status,
        "error_code": error.error_code,
        "title": error.title,
        "message": error.message,
        "error": f"{error.title}: {error.message}",
        "request_id": request_id,
        "context_id": context_id,
    }


def request_id_of(scope_holder: Request | Any) -> str:
    return scope_holder.scope.get("state", {}).get("request_id", "")


def response(error: ApiError, request_id: str) -> JSONResponse:
    headers = {"X-Request-ID": request_id, **error.headers}
    return JSONResponse(http_body(error, request_id), status_code=error.status, headers=headers)


async def handle_api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return response(exc, request_id_of(request))
