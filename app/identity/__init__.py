"""Who a bearer token says is calling: OpenID Connect JWTs checked against the issuer's keys.

- :mod:`.identities`: :class:`Identity` (principal, scopes, tenant, claims) and
  :class:`InvalidToken`, importable without PyJWT.
- :mod:`.keys`: the issuer's signing keys (OIDC discovery → ``jwks_uri``), fetched
  without blocking the event loop, cached, and fetched again for a key id not yet
  seen (a key rotated in), at most once per ``refetch_seconds``.
- :mod:`.tokens`: :class:`~.tokens.TokenValidator` checks a JWT (signature, ``iss``,
  ``aud``, ``exp``/``nbf`` with a small skew) and gives its :class:`Identity`.
- :mod:`.metadata`: the MCP resource's protected-resource metadata (RFC 9728).

agenthost is a resource server only: it never issues tokens. PyJWT is imported
only when tokens are configured.
"""

from agenthost.app.identity.identities import (
    TOKEN_PREFIX,
    Identity,
    InvalidToken,
    looks_like_jwt,
)

__all__ = ["TOKEN_PREFIX", "Identity", "InvalidToken", "looks_like_jwt"]
