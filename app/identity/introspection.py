"""Opaque access tokens, checked by the issuer's introspection endpoint (RFC 7662).

agenthost posts the token with its own client credentials (HTTP Basic) and
accepts it when the answer says ``active``, names the issuer (when it names
one) and holds the audience in ``aud`` (a token for another resource is
refused, as a JWT would be). The validator remembers an accepted token for
at most ``remember_seconds``, so a revoked token stops working within that.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

try:
    import httpx
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError('OIDC tokens need the oidc extra: pip install "agenthost[oidc]"') from exc

from agenthost.app.identity.identities import InvalidToken


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
        self._client: httpx.AsyncClient | None = None

    async def claims(self, token: str, *, issuer: str, audience: str) -> dict[str, Any]:
        """The token's claims if it is active and for ``audience``; raises :class:`InvalidToken`."""
        client = await self._http()
        try:
            response = await client.post(
                self.url, data={"token": token, "token_type_hint": "access_token"}, auth=self.auth
            )
            response.raise_for_status()
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise InvalidToken(f"cannot check the token with the issuer: {exc}") from None
        if not isinstance(answer, dict) or answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        if "iss" in answer and answer["iss"] != issuer:
            raise InvalidToken("the token is of another issuer")
        aud = answer.get("aud")
        if audience not in (aud if isinstance(aud, list) else [aud]):
            raise InvalidToken("the token is not for this audience")
        return answer

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
