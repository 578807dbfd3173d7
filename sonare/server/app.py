"""The application factory: routes, middleware and error handlers around one `Service`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute

from sonare.server import health, sagemaker, stt_http, stt_ws, tokens_api, tts_http, tts_ws, voices_api
from sonare.server.config import ServerConfig
from sonare.server.errors import TITLES, ApiError, handle_api_error, request_id_of, response
from sonare.server.middleware import RequestMiddleware
from sonare.server.service import Service

log = logging.getLogger(__name__)


def routes() -> list[BaseRoute]:
    return [
        Route("/", health.root),
        Route("/live", health.live),
        Route("/ready", health.ready),
        Route("/metrics", health.metrics),
        Route("/tts/bytes", tts_http.tts_bytes, methods=["POST"]),
        Route("/tts/sse", tts_http.tts_sse, methods=["POST"]),
        WebSocketRoute("/tts/websocket", tts_ws.tts_websocket),
        Route("/stt", stt_http.transcribe, methods=["POST"]),
        WebSocketRoute("/stt/websocket", stt_ws.stt_websocket),
        WebSocketRoute("/stt/turns/websocket", stt_ws.stt_turns_websocket),
        Route("/voices", voices_api.list_voices),
        Route("/voices/", voices_api.list_voices, methods=["GET"]),
        Route("/voices/", voices_api.create_voice, methods=["POST"]),
        Route("/voices/clone", voices_api.clone_voice, methods=["POST"]),
        Route("/voices/clone/clip", voices_api.clone_clip, methods=["POST"]),
        Route("/voices/mix", voices_api.mix_voices, methods=["POST"]),
        Route("/voices/{voice_id}", voices_api.get_voice, methods=["GET"]),
        Route("/voices/{voice_id}", voices_api.update_voice, methods=["PATCH"]),
        Route("/voices/{voice_id}", voices_api.delete_voice, methods=["DELETE"]),
        Route("/access-token", tokens_api.access_token, methods=["POST"]),
        Route("/ping", sagemaker.ping),
        Route("/invocations", sagemaker.invocations, methods=["POST"]),
        WebSocketRoute("/invocations-bidirectional-stream", sagemaker.bidirectional_stream),
    ]


def create_app(config: ServerConfig, service: Service | None = None) -> Starlette:
    """The ASGI app. Models load in the background once it starts, so `/live` answers at once and
    `/ready` turns true only when the models are loaded and warm."""
    table = routes()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        starting = asyncio.create_task(app.state.service.start(), name="sonare-startup")
        try:
            yield
        finally:
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            await app.state.service.stop()

    route_names = {route.endpoint: route.path for route in table}  # type: ignore[attr-defined]
    app = Starlette(
        routes=table,
        lifespan=lifespan,
        middleware=[Middleware(RequestMiddleware, service=lambda: app.state.service, route_names=route_names)],
        exception_handlers={
            ApiError: handle_api_error,
            HTTPException: _http_exception,
            Exception: _unexpected,
        },
    )
    app.state.service = service or Service(config)
    return app


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    error = ApiError(exc.status_code, codes.get(exc.status_code, "http_error"), exc.detail, TITLES.get(exc.status_code))
    return response(error, request_id_of(request))


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.error("unhandled error serving %s", request.url.path, exc_info=exc)
    return response(ApiError(500, "internal_error", "an unexpected error occurred"), request_id_of(request))
