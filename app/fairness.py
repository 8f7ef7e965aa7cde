"""Per-principal fairness: one API key cannot hold every request slot.

:class:`InFlightLimit` caps the requests one principal (an API key's name,
set by :class:`~agenthost.app.guards.APIKeyGuard`) has in flight at once,
from the end of the head until the response ends (a slow body and a long
stream both count). Past the cap the request gets 429 in its protocol's
shape with ``Retry-After`` and ``Connection: close``, before its body is
read. Requests without a principal (auth off, or public paths without a
key) are not counted here: the connection layer caps them per client address
(:mod:`agenthost.app.connections`).
"""

from __future__ import annotations

from collections import Counter

from starlette.types import ASGIApp, Receive, Scope, Send

from agenthost.app.guards import ErrorFor


class InFlightLimit:
    """At most ``max_requests`` requests in flight per principal; 429 beyond."""

    def __init__(self, app: ASGIApp, *, max_requests: int, error_for: ErrorFor) -> None:
        self.app = app
        self.max_requests = max_requests
        self.error_for = error_for
        self.in_flight: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("state", {}).get("principal") if scope["type"] == "http" else None
        if principal is None:
            await self.app(scope, receive, send)
            return
        if self.in_flight[principal] >= self.max_requests:
            message = f"more than {self.max_requests} requests in flight for this API key"
            response = self.error_for(scope["path"], 429, message, "too_many_requests")
            response.headers["retry-after"] = "1"
            response.headers["connection"] = "close"  # its body is never read
            await response(scope, receive, send)
            return
        self.in_flight[principal] += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight[principal] -= 1
            if not self.in_flight[principal]:
                del self.in_flight[principal]
