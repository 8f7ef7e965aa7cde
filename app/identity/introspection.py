"""Opaque access tokens, checked by the issuer's introspection endpoint (RFC 7662).

agenthost posts the token with its own client credentials (HTTP Basic) and
accepts it when the answer says ``active``, names the issuer (when it names
one) and holds the audience in ``aud`` (a token for another resource is
refused, as a JWT would be). The validator remembers an accepted token for
at most ``remember_seconds``, so a revoked token stops working within that;
and a refused one as long, so retrying it does not cost the issuer a request
each time.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import Any

try:
    import httpx
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError('OIDC tokens need the oidc extra: pip install "agenthost[oidc]"') from exc

from agenthost.app.identity.identities import InvalidToken


class _Refused(Exception):
    """The issuer's answer refuses the token (remembered, unlike an unreachable issuer)."""


class Introspector:
    """Asks ``url`` about opaque tokens, as the client ``client_id``."""

    def __init__(
        self,
        url: str,
        client_id: str,
        client_secret: str,
        *,
        timeout: float = 5.0,
        remember_seconds: float = 60.0,
    ) -> None:
        self.url = url
        self.auth = (client_id, client_secret)
        self.timeout = timeout
        self.remember_seconds = remember_seconds
        self.requests = 0
        self._client: httpx.AsyncClient | None = None
        # Bearers refused lately → when the refusal ends: a client retrying a bad token
        # (or a wrong API key) does not cost the issuer a request each time.
        self._refused: dict[str, tuple[float, str]] = {}
        self.max_refused = 4096

    async def claims(self, token: str, *, issuer: str, audience: str) -> dict[str, Any]:
        """The token's claims if it is active and for ``audience``; raises :class:`InvalidToken`.

        A refusal is remembered for ``remember_seconds`` (not an unreachable issuer's)."""
        refused = self._refused.get(token)
        if refused is not None and refused[0] > time.monotonic():
            raise InvalidToken(refused[1])
        try:
            return self._checked(await self._ask(token), issuer, audience)
        except _Refused as exc:
            if len(self._refused) >= self.max_refused:
                del self._refused[next(iter(self._refused))]  # the oldest
            self._refused[token] = (time.monotonic() + self.remember_seconds, str(exc))
            raise InvalidToken(str(exc)) from None

    @staticmethod
    def _checked(answer: Any, issuer: str, audience: str) -> dict[str, Any]:
        if not isinstance(answer, dict) or answer.get("active") is not True:
            raise _Refused("the token is not active")
        if "iss" in answer and answer["iss"] != issuer:
            raise _Refused("the token is of another issuer")
        aud = answer.get("aud")
        if audience not in (aud if isinstance(aud, list) else [aud]):
            raise _Refused("the token is not for this audience")
        return answer

    async def _ask(self, token: str) -> Any:
        client = await self._http()
        self.requests += 1
        try:
            response = await client.post(
                self.url, data={"token": token, "token_type_hint": "access_token"}, auth=self.auth
            )
            response.raise_for_status()
            return response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise InvalidToken(f"cannot check the token with the issuer: {exc}") from None

    async def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            # Loading the CA certificates takes 10-150 ms of CPU: not on the event loop.
            tls = await asyncio.to_thread(ssl.create_default_context)
            self._client = httpx.AsyncClient(timeout=self.timeout, verify=tls)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
