"""Per-request handling shared by every route: a request id, authentication, metrics and an access log.

Written as plain ASGI so that WebSocket upgrades get the same treatment as HTTP requests: a refused
upgrade is answered with HTTP 401 (clients report it as a status error), not an accepted-then-closed
socket.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sonare.server import errors
from sonare.server.errors import ApiError
from sonare.server.logging import request_id
from sonare.server.service import Service

log = logging.getLogger("sonare.server.access")

_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class RequestMiddleware:
    def __init__(self, app: ASGIApp, service: Callable[[], Service], route_names: Mapping[Callable, str]):
        self.app = app
        self._service = service
        self._route_names = route_names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        service = self._service()
        headers = scope.get("headers", [])
        incoming = dict(headers).get(b"x-request-id", b"").decode("latin-1")
        rid = incoming if _SANE_ID.match(incoming) else str(uuid.uuid4())
        scope.setdefault("state", {})["request_id"] = rid
        token = request_id.set(rid)
        try:
            if not service.auth.allows(scope["path"], headers, scope.get("query_string", b"")):
                await self._refuse(scope, send, rid)
                return
            if scope["type"] == "http":
                await self._http(scope, receive, send, service, rid)
            else:
                await self._websocket(scope, receive, send)
        finally:
            request_id.reset(token)

    async def _http(self, scope: Scope, receive: Receive, send: Send, service: Service, rid: str) -> None:
        started = time.monotonic()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                if not any(k.lower() == b"x-request-id" for k, _ in message["headers"]):
                    message["headers"] = [*message["headers"], (b"x-request-id", rid.encode())]
            await send(message)

        try:
            with service.http_request():
                await self.app(scope, receive, send_with_id)
        finally:
            route = self._route_names.get(scope.get("endpoint"), "unmatched")
            elapsed = time.monotonic() - started
            service.metrics.requests.labels(route, scope["method"], str(status)).inc()
            service.metrics.request_seconds.labels(route).observe(elapsed)
            log.info(
                "%s %s %d",
                scope["method"],
                scope["path"],
                status,
                extra={"status": status, "route": route, "duration_ms": round(elapsed * 1000, 1)},
            )

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            log.info(
                "WS %s closed",
                scope["path"],
                extra={"duration_ms": round((time.monotonic() - started) * 1000, 1)},
            )

    async def _refuse(self, scope: Scope, send: Send, rid: str) -> None:
        error = ApiError(401, "unauthorized", "a valid API key is required (Authorization: Bearer, X-API-Key)")
        log.info("refused %s %s: no valid API key", scope.get("method", "WS"), scope["path"])
        body = json.dumps(errors.http_body(error, rid)).encode()
        headers = [(b"content-type", b"application/json"), (b"x-request-id", rid.encode())]
        if scope["type"] == "websocket":
            if "websocket.http.response" not in scope.get("extensions", {}):
                await send({"type": "websocket.close", "code": 1008, "reason": "unauthorized"})
                return
            start, body_type = "websocket.http.response.start", "websocket.http.response.body"
        else:
            start, body_type = "http.response.start", "http.response.body"
        await send({"type": start, "status": 401, "headers": headers})
        await send({"type": body_type, "body": body})
