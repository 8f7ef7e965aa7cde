"""JWT bearer tokens of an OpenID Connect issuer, checked and turned into an identity.

A token passes when it is signed with one of the issuer's keys (RS256, ES256
or EdDSA only: ``none`` and the shared-secret HS* algorithms are refused), its
``iss`` is the issuer, its ``aud`` holds the audience, and ``exp`` (required)
and ``nbf`` hold within ``skew_seconds``. Its principal is ``oidc:`` plus the
principal claim (``sub`` by default): an API key's name cannot hold ``:``, so
the two never collide. Its scopes come from the scopes claim, a
space-separated string (``scope``, RFC 9068) or a list (``scp``, Entra ID).
A bearer that is no JWT is checked by introspection when it is configured
(:mod:`.introspection`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

try:
    import jwt
    from jwt import PyJWK
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError('OIDC tokens need the oidc extra: pip install "agenthost[oidc]"') from exc

from agenthost.app.identity.identities import TOKEN_PREFIX, Identity, InvalidToken, looks_like_jwt
from agenthost.app.identity.introspection import Introspector
from agenthost.app.identity.keys import IssuerKeys, KeysUnavailable
from agenthost.app.principals import TENANT as TENANT_NAME

ALGORITHMS = ("RS256", "ES256", "EdDSA")


class TokenValidator:
    """Checks JWTs of one issuer for one audience."""

    def __init__(
        self,
        keys: IssuerKeys,
        *,
        audience: str,
        principal_claim: str = "sub",
        scopes_claim: str = "scope",
        tenant_claim: str | None = None,
        skew_seconds: float = 30.0,
        remember: int = 4096,
        introspector: Introspector | None = None,
    ) -> None:
        self.keys = keys
        self.issuer = keys.issuer
        self.audience = audience
        self.principal_claim = principal_claim
        self.scopes_claim = scopes_claim
        self.tenant_claim = tenant_claim
        self.skew_seconds = skew_seconds
        self.introspector = introspector
        # Tokens checked already → (identity, the key set's version, exp): a client
        # sends one token many times.
        self.remember = remember
        self._checked: dict[str, tuple[Identity, int, float]] = {}

    async def validate(self, token: str) -> Identity:
        """The token's identity; fetches the issuer's keys when the token names a new one.

        Raises :class:`InvalidToken`.
        """
        if (known := self._remembered(token)) is not None:
            return known
        if not looks_like_jwt(token):
            if self.introspector is None:
                raise InvalidToken("the bearer is neither an API key nor a JWT")
            claims = await self.introspector.claims(
                token, issuer=self.issuer, audience=self.audience
            )
            identity = self._identity(claims)
            expires = time.time() + self.introspector.remember_seconds
            self._remember(token, identity, min(float(claims.get("exp", expires)), expires))
            return identity
        kid = _key_id(token)
        try:
            key = await self.keys.key(kid)
        except KeysUnavailable as exc:
            raise InvalidToken(str(exc)) from None
        return self._decode(token, key)

    def validate_cached(self, token: str) -> Identity:
        """The token's identity, with the keys already fetched only (no I/O)."""
        if (known := self._remembered(token)) is not None:
            return known
        return self._decode(token, self.keys.cached(_key_id(token)))

    def _remembered(self, token: str) -> Identity | None:
        """A token checked before, while the issuer's keys are those it was checked with
        and it has not expired (a signature check costs ~100 µs of CPU, a lookup ~1)."""
        known = self._checked.get(token)
        if known is None:
            return None
        identity, keys_version, expires = known
        if keys_version != self.keys.fetches or time.time() > expires + self.skew_seconds:
            del self._checked[token]
            return None
        return identity

    def _remember(self, token: str, identity: Identity, expires: float) -> None:
        if not self.remember:
            return
        if len(self._checked) >= self.remember:
            del self._checked[next(iter(self._checked))]  # the oldest
        self._checked[token] = (identity, self.keys.fetches, expires)

    def _decode(self, token: str, key: PyJWK | None) -> Identity:
        if key is None:
            raise InvalidToken("the token is not signed with a key of the issuer")
        try:
            claims = jwt.decode(
                token,
                key=key,
                algorithms=list(ALGORITHMS),
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.skew_seconds,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.InvalidTokenError as exc:
            raise InvalidToken(f"invalid token: {exc}") from None
        identity = self._identity(claims)
        self._remember(token, identity, float(claims["exp"]))
        return identity

    def _identity(self, claims: dict[str, Any]) -> Identity:
        # A client-credentials token names its client (RFC 9068, RFC 7662), maybe no sub.
        subject = claims.get(self.principal_claim) or claims.get("client_id")
        if not isinstance(subject, str) or not subject:
            raise InvalidToken(f"the token has no {self.principal_claim!r} claim")
        tenant = claims.get(self.tenant_claim) if self.tenant_claim else None
        if tenant is not None and not (isinstance(tenant, str) and TENANT_NAME.match(tenant)):
            # A tenant namespaces all the caller's state: never guess one.
            raise InvalidToken(f"the token's {self.tenant_claim!r} claim is not a tenant name")
        return Identity(TOKEN_PREFIX + subject, _scopes(claims, self.scopes_claim), tenant, claims)


def _key_id(token: str) -> str | None:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError as exc:
        raise InvalidToken(f"invalid token: {exc}") from None
    if header.get("alg") not in ALGORITHMS:
        raise InvalidToken(f"tokens signed with {header.get('alg')!r} are not accepted")
    kid = header.get("kid")
    return kid if isinstance(kid, str) else None


def _scopes(claims: Mapping[str, Any], name: str) -> frozenset[str]:
    """Scopes from ``name`` (space-separated string or list), else from ``scp``."""
    for claim in (name, "scp"):
        value = claims.get(claim)
        if isinstance(value, str):
            return frozenset(value.split())
        if isinstance(value, list):
            return frozenset(str(v) for v in value)
    return frozenset()
