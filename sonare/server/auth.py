"""API-key authentication in every form the clients use: `Authorization: Bearer`, `X-API-Key`, and
the `api_key` / `access_token` query parameters (for WebSockets, which browsers cannot give headers)."""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from urllib.parse import parse_qsl

# Routes that load balancers and orchestrators probe without credentials.
PUBLIC_PATHS = frozenset({"/", "/live", "/ready", "/ping"})


def credentials(headers: Iterable[tuple[bytes, bytes]], query_string: bytes) -> list[str]:
    """Every credential the request presents, headers first."""
    found = []
    for name, value in headers:
        name = name.lower()
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                found.append(token.strip())
        elif name == b"x-api-key" and value.strip():
            found.append(value.decode("latin-1").strip())
    for key, value in parse_qsl(query_string.decode("latin-1"), keep_blank_values=False):
        if key in ("api_key", "access_token"):
            found.append(value)
    return found


class Authenticator:
    def __init__(self, api_keys: Iterable[str]):
        self._keys = [key.encode() for key in api_keys]

    @property
    def open(self) -> bool:
        return not self._keys

    def allows(self, path: str, headers: Iterable[tuple[bytes, bytes]], query_string: bytes) -> bool:
        if self.open or path in PUBLIC_PATHS:
            return True
        return any(self._known(c) for c in credentials(headers, query_string))

    def _known(self, credential: str) -> bool:
        given = credential.encode("utf-8", "surrogateescape")
        # Compare against every key without stopping early, so timing reveals nothing about which matched.
        matches = [hmac.compare_digest(given, key) for key in self._keys]
        return any(matches)
