"""What a valid token says of its caller, apart from how it is checked (no PyJWT here:
the guard imports this whether or not tokens are on)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TOKEN_PREFIX = "oidc:"
"""What a token's principal starts with (an API key's principal never holds ``:``)."""


class InvalidToken(Exception):
    """The token is not one this server accepts; the message says why (safe to send)."""


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a valid token names: its principal, scopes, tenant (None: no tenant claim
    configured, or none in the token) and claims."""

    principal: str
    scopes: frozenset[str] = frozenset()
    tenant: str | None = None
    claims: Mapping[str, Any] = field(default_factory=dict)

    @property
    def grants(self) -> frozenset[str]:
        """What an agent's ``allow`` list may name to let this identity in: ``scope:NAME``."""
        return frozenset(f"scope:{s}" for s in self.scopes)


def looks_like_jwt(credential: str) -> bool:
    """Whether a bearer credential has a JWS's three parts (an API key is then never one)."""
    return credential.count(".") == 2
