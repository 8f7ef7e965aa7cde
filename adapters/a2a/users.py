"""The SDK's call-context user, built from the app's principal.

The SDK keys tasks by ``context.user.user_name``; building it from the
principal (the API key's name, ``anonymous`` with auth off) is what keeps
one key's tasks out of another's reach, on HTTP and on gRPC alike.
"""

from __future__ import annotations

from collections.abc import Callable

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.routes import DefaultServerCallContextBuilder
from starlette.requests import Request

from agenthost.adapters.base import principal_of
from agenthost.agents import ANONYMOUS

CONNECTION = "agenthost.connection"
"""The call's HTTP request in its context's state (an extended card's URLs come from it)."""

PrincipalForKey = Callable[[str], str | None]
"""An API key → its principal, or None when the key is not accepted."""


class PrincipalUser(User):
    """A principal as the SDK's user."""

    def __init__(self, principal: str) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return self.principal != ANONYMOUS

    @property
    def user_name(self) -> str:
        return self.principal


class PrincipalContextBuilder(DefaultServerCallContextBuilder):
    """HTTP: the user is the principal the app's auth layer put on the request."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        context.state[CONNECTION] = request
        return context

    def build_user(self, request: Request) -> User:
        return PrincipalUser(principal_of(request))
