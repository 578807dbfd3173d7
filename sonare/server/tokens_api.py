"""`POST /access-token`: a short-lived token for browsers, which cannot keep an API key secret."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from sonare.server.auth import GRANT_PATHS
from sonare.server.bodies import read_json_object
from sonare.server.errors import invalid
from sonare.server.service import Service

MAX_EXPIRY_S = 3600
DEFAULT_EXPIRY_S = 60


async def access_token(request: Request) -> Response:
    service: Service = request.app.state.service
    body = await read_json_object(request, 64 * 1024)
    grants = body.get("grants", {})
    if not isinstance(grants, dict) or any(not isinstance(v, bool) for v in grants.values()):
        raise invalid('grants must be an object of booleans, e.g. {"tts": true, "stt": false}')
    expires_in = body.get("expires_in", DEFAULT_EXPIRY_S)
    if isinstance(expires_in, bool) or not isinstance(expires_in, int) or not 1 <= expires_in <= MAX_EXPIRY_S:
        raise invalid(f"expires_in must be an integer number of seconds, 1-{MAX_EXPIRY_S}")
    # Grants this server has no routes for (such as agent) are accepted and give access to nothing.
    granted = [name for name, on in grants.items() if on and name in GRANT_PATHS]
    return JSONResponse({"token": service.auth.issue_token(granted, expires_in)})
