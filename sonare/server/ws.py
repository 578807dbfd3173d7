"""What every WebSocket route does the same way: accept the upgrade with the request id."""

from __future__ import annotations

from starlette.websockets import WebSocket

from sonare.server.errors import request_id_of


async def accept(ws: WebSocket) -> None:
    """Accept the upgrade, returning the request id on the handshake response (clients log it)."""
    await ws.accept(headers=[(b"x-request-id", request_id_of(ws).encode())])
