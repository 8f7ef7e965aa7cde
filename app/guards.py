"""Pure ASGI middleware that guards every surface: API keys and body size.

Pure ASGI (not ``BaseHTTPMiddleware``, which costs ~0.3 ms a request). The
refusals use the error shape of the protocol that owns the path.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, Mapping

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ErrorFor = Callable[[str, int, str, str], Response]
"""``error_for(path, status, message, code)`` → a response in the path's protocol shape."""


class APIKeyGuard:
    """Requires one of the configured keys, as a bearer token or ``x-api-key``.

    The matching key's principal goes into ``scope["state"]["principal"]``
    (read by adapters with ``adapters.base.principal_of``).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        principals: Mapping[str, str],
        public: Iterable[str],
        public_suffixes: tuple[str, ...] = (),
        error_for: ErrorFor,
    ):
        self.app = app
        self.keys = [(key.encode(), name) for key, name in principals.items()]
        self.public = frozenset(public)
        # Discovery documents anywhere in the tree (A2A cards under each agent).
        self.public_suffixes = public_suffixes
        self.error_for = error_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        principal = self._principal(scope)
        if principal is not None:
            scope.setdefault("state", {})["principal"] = principal
        path = scope["path"]
        if principal is not None or path in self.public or path.endswith(self.public_suffixes):
            await self.app(scope, receive, send)
            return
        response = self.error_for(
            scope["path"], 401, "missing or invalid API key", "invalid_api_key"
        )
        response.headers["www-authenticate"] = "Bearer"
        await response(scope, receive, send)

    def _principal(self, scope: Scope) -> str | None:
        headers = Headers(scope=scope)
        authorization = headers.get("authorization", "")
        scheme, _, token = authorization.partition(" ")
        offered = (token.strip() if scheme.lower() == "bearer" else "") or headers.get(
            "x-api-key", ""
        )
        candidate = offered.encode()
        # Compare with every key, so the time taken does not tell which one matched.
        found: str | None = None
        for key, name in self.keys:
            if hmac.compare_digest(candidate, key):
                found = name
        return found


class BodyLimitGuard:
    """Refuses request bodies over ``max_bytes`` with 413, declared or streamed.

    A streamed body that grows too large looks like a client disconnect to
    the app; whatever the app answers is dropped and the 413 sent instead.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int, error_for: ErrorFor) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.error_for = error_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        received = 0
        too_large = started = False

        async def counting_receive() -> Message:
            nonlocal received, too_large
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    too_large = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if too_large and not started:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not too_large or started:
                raise
        if too_large and not started:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"request body larger than {self.max_bytes} bytes"
        await self.error_for(scope["path"], 413, message, "request_too_large")(scope, receive, send)
