"""What each ``response.create`` of a WebSocket passes before it runs, as a request would.

The app's guards see the upgrade only: its key or token, its quotas once.
A connection then lives as long as its client keeps it, so each message
asks again what each HTTP request is asked:

- **its credential still holds**: the upgrade's API key or bearer token,
  checked by the app (:attr:`AdapterContext.principal_for_key`, after
  :attr:`~AdapterContext.principal_for_token` for a token), still names the
  connection's principal. A token that has expired (beyond the clock skew)
  ends the connection: an ``error`` event (401 ``invalid_token``), then
  close code :data:`POLICY_VIOLATION`; the client reconnects with a new one.
- **its principal's quotas** (:attr:`AdapterContext.quota`, the app's check
  for calls outside its HTTP middleware): each message counts against the
  requests a minute and, as a run, needs tokens left in the day; its run's
  tokens count against the principal. A refusal is an ``error`` event (429
  ``rate_limit_exceeded``, the seconds to wait in its message) and the
  connection stays open. Run slots (runs at once) are not held per message:
  a connection runs one response at a time.
- **the body bytes in flight** (:attr:`AdapterContext.body_bytes`, the very
  budget HTTP bodies count against): a message holds its size from its
  receipt until it is parsed and validated (queued behind a running
  response included), as its principal's (auth off: its client address's).
  Past ``AGENTHOST_MAX_BODY_BYTES_PER_PRINCIPAL`` it is refused with an
  ``error`` event (429 ``too_many_requests``), past an equal share of
  ``AGENTHOST_MAX_BODY_BYTES_IN_FLIGHT`` with 503 ``server_busy``, as the HTTP
  path answers; the connection stays open. A message alone (its principal
  holds nothing else) always passes, as a body alone does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from starlette.types import Scope
from starlette.websockets import WebSocket

from agenthost.adapters.base import (
    AdapterContext,
    BodyBytes,
    CallQuota,
    PrincipalForKey,
    PrincipalForToken,
)
from agenthost.adapters.openai.errors import OpenAIError

POLICY_VIOLATION = 1008
"""The close code of a connection whose credential no longer holds (RFC 6455)."""


class CredentialExpired(Exception):
    """The connection's credential no longer names its principal: close it."""

    error = OpenAIError(
        401,
        "the bearer token of this connection has expired or is no longer valid; "
        "reconnect with a new one",
        code="invalid_token",
    )


@dataclass(slots=True)
class MessageBytes:
    """The bytes one connection's messages hold in the app's body budget (None: not
    counted), so that what a closed connection still holds is given back."""

    scope: Scope = field(default_factory=dict)
    budget: BodyBytes | None = None
    held: int = 0

    def hold(self, count: int) -> OpenAIError | None:
        """Take ``count`` bytes for a message just received: None once taken, else the
        refusal to answer (nothing taken)."""
        if self.budget is None:
            return None
        refusal = self.budget.hold(self.scope, count)
        if refusal is not None:
            status, message, code = refusal
            return OpenAIError(status, message, code=code)
        self.held += count
        return None

    def release(self, count: int) -> None:
        """Give back ``count`` bytes :meth:`hold` took (its message is parsed)."""
        count = min(count, self.held)
        if self.budget is not None and count:
            self.budget.release(self.scope, count)
            self.held -= count

    def release_all(self) -> None:
        """Give back what messages still queued hold (the connection is over)."""
        self.release(self.held)


@dataclass(frozen=True, slots=True)
class MessageChecks:
    """The checks of one connection's messages (all off: auth and quotas off)."""

    principal: str
    credential: str = ""
    principal_for_key: PrincipalForKey | None = None
    principal_for_token: PrincipalForToken | None = None
    quota: CallQuota | None = None
    body_bytes: MessageBytes = field(default_factory=MessageBytes)

    @classmethod
    def of(cls, websocket: WebSocket, principal: str, context: AdapterContext) -> MessageChecks:
        """The checks of ``websocket``'s messages, with the app's checks from ``context``."""
        return cls(
            principal,
            credential_of(websocket),
            context.principal_for_key,
            context.principal_for_token,
            context.quota,
            MessageBytes(websocket.scope, context.body_bytes),
        )

    async def admit(self) -> None:
        """Let one ``response.create`` run: raises :class:`CredentialExpired`, or the
        :class:`OpenAIError` of a quota refusal."""
        if self.principal_for_key is not None and self.credential:
            if self.principal_for_token is not None:
                await self.principal_for_token(self.credential)  # fetches a new signing key
            if self.principal_for_key(self.credential) != self.principal:
                raise CredentialExpired
        if self.quota is None:
            return
        refusal = await self.quota(self.principal, True)
        if refusal is not None:
            why, seconds = refusal
            raise OpenAIError(
                429, f"{why}; retry in {max(1, round(seconds))} s", code="rate_limit_exceeded"
            )


def credential_of(websocket: WebSocket) -> str:
    """What the upgrade offered, as the app's key check reads it: a bearer credential,
    else ``x-api-key``."""
    scheme, _, token = websocket.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return websocket.headers.get("x-api-key", "")
