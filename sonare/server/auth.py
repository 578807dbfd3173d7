"""API-key authentication in every form the clients use: `Authorization: Bearer`, `X-API-Key`, and
the `api_key` / `access_token` query parameters (for WebSockets, which browsers cannot give headers).

Short-lived access tokens (from `POST /access-token`) let a browser use the TTS or STT routes without
holding a key: the token names its grants and expiry and is signed with a secret derived from the API
keys, so every replica sharing the keys accepts it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Iterable
from urllib.parse import parse_qsl

TOKEN_PREFIX = "sonare_at."
# The routes each grant opens to a token.
GRANT_PATHS = {"tts": ("/tts/", "/voices"), "stt": ("/stt",)}

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
        seed = b"\0".join(sorted(self._keys)) if self._keys else secrets.token_bytes(32)
        self._token_secret = hashlib.sha256(b"sonare access token\0" + seed).digest()

    @property
    def open(self) -> bool:
        return not self._keys

    def allows(self, path: str, headers: Iterable[tuple[bytes, bytes]], query_string: bytes) -> bool:
        if self.open or path in PUBLIC_PATHS:
            return True
        for credential in credentials(headers, query_string):
            if credential.startswith(TOKEN_PREFIX):
                grants = self.token_grants(credential)
                if any(path.startswith(GRANT_PATHS.get(g, ())) for g in grants):
                    return True
            elif self._known(credential):
                return True
        return False

    def issue_token(self, grants: Iterable[str], expires_in: int) -> str:
        payload = json.dumps({"grants": sorted(grants), "exp": int(time.time()) + expires_in}).encode()
        body = base64.urlsafe_b64encode(payload).rstrip(b"=")
        return TOKEN_PREFIX + body.decode() + "." + self._sign(body)

    def token_grants(self, token: str) -> set[str]:
        """The grants of a valid, unexpired token; empty for anything else."""
        body, _, signature = token.removeprefix(TOKEN_PREFIX).partition(".")
        if not hmac.compare_digest(self._sign(body.encode()), signature):
            return set()
        try:
            payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        except ValueError:
            return set()
        if not isinstance(payload, dict) or not isinstance(payload.get("exp"), int) or payload["exp"] < time.time():
            return set()
        return {g for g in payload.get("grants", []) if isinstance(g, str)}

    def _sign(self, body: bytes) -> str:
        return (
            base64.urlsafe_b64encode(hmac.new(self._token_secret, body, hashlib.sha256).digest()).rstrip(b"=").decode()
        )

    def _known(self, credential: str) -> bool:
        given = credential.encode("utf-8", "surrogateescape")
        # Compare against every key without stopping early, so timing reveals nothing about which matched.
        matches = [hmac.compare_digest(given, key) for key in self._keys]
        return any(matches)
