"""An issuer's signing keys, found by OpenID Connect discovery and cached.

The keys are fetched with an async client (never blocking the event loop) the
first time a token needs them, and again when a token names a key id the cache
does not hold (the issuer rotated a key in), but at most once per
``refetch_seconds``: a flood of tokens with made-up key ids costs the issuer one
request per interval, not one per token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from typing import Any

try:
    import httpx
    from jwt import PyJWK, PyJWKSet
    from jwt.exceptions import PyJWKError, PyJWKSetError
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError('OIDC tokens need the oidc extra: pip install "agenthost[oidc]"') from exc

logger = logging.getLogger("agenthost")


class KeysUnavailable(Exception):
    """The issuer's keys could not be fetched."""


class IssuerKeys:
    """The signing keys of ``issuer`` by key id (``kid``)."""

    def __init__(self, issuer: str, *, refetch_seconds: float = 30.0, timeout: float = 5.0) -> None:
        self.issuer = issuer
        self.refetch_seconds = refetch_seconds
        self.timeout = timeout
        self.jwks_uri: str | None = None
        self.keys: dict[str, PyJWK] = {}
        self.fetches = 0
        """How many times the keys were fetched: their version."""
        self._fetched_at = -float("inf")
        self._lock = asyncio.Lock()

    def cached(self, kid: str | None) -> PyJWK | None:
        """The key ``kid`` names (none named: the only key) if the cache holds it."""
        if kid is None:
            return next(iter(self.keys.values())) if len(self.keys) == 1 else None
        return self.keys.get(kid)

    async def key(self, kid: str | None) -> PyJWK | None:
        """The key ``kid`` names, fetching the key set again if it is unknown and the
        last fetch is older than ``refetch_seconds``; None: the issuer has no such key."""
        if (found := self.cached(kid)) is not None:
            return found
        async with self._lock:
            if (found := self.cached(kid)) is not None:
                return found  # fetched while this one waited
            if time.monotonic() - self._fetched_at < self.refetch_seconds:
                return None
            await self.refresh()
        return self.cached(kid)

    async def prefetch(self) -> None:
        """Fetch the keys if none are held yet; a failure is logged, not raised."""
        async with self._lock:
            if not self.keys:
                with contextlib.suppress(KeysUnavailable):
                    await self.refresh()

    async def refresh(self) -> None:
        """Fetch the key set now (discovering ``jwks_uri`` first, once)."""
        self._fetched_at = time.monotonic()
        # Loading the CA certificates takes 10-150 ms of CPU: not on the event loop.
        tls = await asyncio.to_thread(ssl.create_default_context)
        async with httpx.AsyncClient(timeout=self.timeout, verify=tls) as client:
            try:
                if self.jwks_uri is None:
                    self.jwks_uri = await self._discover(client)
                response = await client.get(self.jwks_uri)
                response.raise_for_status()
                data = response.json()
            except (httpx.HTTPError, ValueError) as exc:
                logger.warning("cannot fetch the signing keys of %s: %s", self.issuer, exc)
                raise KeysUnavailable(f"cannot fetch the issuer's signing keys: {exc}") from None
        self.fetches += 1
        self.keys = _by_kid(data)

    async def _discover(self, client: httpx.AsyncClient) -> str:
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        response = await client.get(url)
        response.raise_for_status()
        document = response.json()
        if document.get("issuer") != self.issuer:
            raise ValueError(
                f"{url} names the issuer {document.get('issuer')!r}, not {self.issuer!r}"
            )
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            raise ValueError(f"{url} has no jwks_uri")
        return jwks_uri


def _by_kid(data: Any) -> dict[str, PyJWK]:
    """The signing keys of a JWKS document by key id (keys for encryption, or of a type
    this PyJWT cannot use, are left out)."""
    try:
        keys = PyJWKSet.from_dict(data).keys
    except (PyJWKError, PyJWKSetError, TypeError, AttributeError):
        return {}
    signing = [k for k in keys if k.public_key_use in (None, "sig")]
    return {str(k.key_id or ""): k for k in signing}
