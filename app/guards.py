"""Pure ASGI middleware that guards every surface: API keys and tokens, origins, body size.

Pure ASGI (not ``BaseHTTPMiddleware``, which costs ~0.3 ms a request). The
refusals use the error shape of the protocol that owns the path.
"""

from __future__ import annotations

import hmac
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agenthost.adapters.base import Principal
from agenthost.adapters.sse import passes_bodies
from agenthost.app.identity import InvalidToken
from agenthost.app.identity.metadata import metadata_url

if TYPE_CHECKING:
    from agenthost.app.identity.tokens import TokenValidator

ErrorFor = Callable[[str, int, str, str], Response]
"""``error_for(path, status, message, code)`` → a response in the path's protocol shape."""


class APIKeyGuard:
    """Requires one of the configured keys, as a bearer token or ``x-api-key``, or,
    with ``tokens``, a valid OIDC access token as a bearer token.

    The caller's principal goes into ``scope["state"]["principal"]`` (read by
    adapters with ``adapters.base.principal_of``): a key's name, or for a token a
    :class:`~agenthost.adapters.base.Principal` carrying its scopes as grants, its
    :class:`~agenthost.app.identity.Identity` beside it (``scope["state"]["identity"]``).
    A bearer that is a configured key is a key, whatever it looks like; else it is
    checked as a token (a JWT, or an opaque token by introspection). Refusals: 401
    with ``WWW-Authenticate: Bearer`` (with tokens on, ``error="invalid_token"``
    when a credential was sent, and the ``resource_metadata`` URL, RFC 9728); a
    valid token without every one of
    ``required_scopes``: 403 ``insufficient_scope`` naming them. Public paths are
    compared without the ``root_path`` (a proxy's prefix).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        principals: Mapping[str, str],
        public: Iterable[str],
        public_suffixes: tuple[str, ...] = (),
        error_for: ErrorFor,
        tokens: TokenValidator | None = None,
        required_scopes: Iterable[str] = (),
    ):
        self.app = app
        self.keys = [(key.encode(), name) for key, name in principals.items()]
        self.public = frozenset(public)
        # Discovery documents anywhere in the tree (A2A cards under each agent).
        self.public_suffixes = public_suffixes
        self.error_for = error_for
        self.tokens = tokens
        self.required_scopes = frozenset(required_scopes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = _route_path(scope)
        public = path in self.public or path.endswith(self.public_suffixes)
        offered, bearer = self._credential(scope)
        principal: str | None = self._key_principal(offered) if offered else None
        problem = ""
        if principal is None and bearer and self.tokens is not None:
            try:
                identity = await self.tokens.validate(offered)
            except InvalidToken as exc:
                problem = str(exc)
            else:
                missing = self.required_scopes - identity.scopes
                if missing and not public:
                    await self._insufficient(scope, receive, send, path, missing)
                    return
                principal = Principal(identity.principal, identity.grants, identity.tenant)
                scope.setdefault("state", {})["identity"] = identity
        if principal is not None:
            scope.setdefault("state", {})["principal"] = principal
        if principal is not None or public:
            await self.app(scope, receive, send)
            return
        await self._unauthorized(scope, receive, send, path, bool(offered), problem)

    async def _unauthorized(
        self, scope: Scope, receive: Receive, send: Send, path: str, offered: bool, problem: str
    ) -> None:
        if self.tokens is None:
            message, code = "missing or invalid API key", "invalid_api_key"
        else:
            message, code = "missing or invalid API key or bearer token", "invalid_token"
            if problem:
                message = problem
        response = self.error_for(path, 401, message, code)
        challenge = "Bearer"  # API keys alone: as it always was
        if self.tokens is not None:
            params = ['error="invalid_token"'] if offered else []
            params.append(f'resource_metadata="{metadata_url(scope, path)}"')
            challenge += " " + ", ".join(params)
        response.headers["www-authenticate"] = challenge
        await response(scope, receive, send)

    async def _insufficient(
        self, scope: Scope, receive: Receive, send: Send, path: str, missing: frozenset[str]
    ) -> None:
        needed = " ".join(sorted(self.required_scopes))
        message = f"the token lacks the scope {' '.join(sorted(missing))}"
        response = self.error_for(path, 403, message, "insufficient_scope")
        response.headers["www-authenticate"] = (
            f'Bearer error="insufficient_scope", scope="{needed}", '
            f'resource_metadata="{metadata_url(scope, path)}"'
        )
        await response(scope, receive, send)

    @staticmethod
    def _credential(scope: Scope) -> tuple[str, bool]:
        """What the caller offers (a bearer credential, else ``x-api-key``), and whether it
        came as a bearer."""
        headers = Headers(scope=scope)
        authorization = headers.get("authorization", "")
        scheme, _, token = authorization.partition(" ")
        bearer = token.strip() if scheme.lower() == "bearer" else ""
        return (bearer, True) if bearer else (headers.get("x-api-key", ""), False)

    def _key_principal(self, offered: str) -> str | None:
        candidate = offered.encode()
        # Compare with every key, so the time taken does not tell which one matched.
        found: str | None = None
        for key, name in self.keys:
            if hmac.compare_digest(candidate, key):
                found = name
        return found


class Busy(NamedTuple):
    """A refusal for want of body budget: 429 for the owner's own, 503 for the ceiling."""

    status: int
    message: str
    code: str


class BodyBudget:
    """The request body bytes in flight, per owner and together, and their bounds: one
    object that every body counts against, HTTP bodies (:class:`BodyLimitGuard`) and
    WebSocket messages (an adapter's, through ``AdapterContext.body_budget``) alike.

    The owner of a request is its principal (``scope["state"]["principal"]``,
    set by :class:`APIKeyGuard`), else its client address (auth off, or a
    public path):

    - an owner may hold ``max_owner_bytes`` (0: no bound of its own);
      past it 429 ``too_many_requests``;
    - all owners together ``max_in_flight_bytes`` (0: no bound); past it,
      only an owner holding less than an equal share of it (the budget
      divided by the owners holding bytes) is let in, others get 503
      ``server_busy``: the owners holding the most are the ones refused, so
      one owner cannot get another a 503.

    An owner's first body (it holds nothing else) is always let in.
    """

    def __init__(self, *, max_in_flight_bytes: int = 0, max_owner_bytes: int = 0) -> None:
        self.max_in_flight_bytes = max_in_flight_bytes
        self.max_owner_bytes = max_owner_bytes
        self.in_flight_bytes = 0
        self.held: Counter[str] = Counter()  # body bytes in flight per owner

    def over_budget(self, owner: str, more: int, own: int = 0) -> Busy | None:
        """Why ``owner`` may not take ``more`` bytes more for a request holding ``own``
        (None: it may)."""
        mine = self.held.get(owner, 0)
        if mine <= own:
            return None  # one body alone always passes
        if self.max_owner_bytes and mine + more > self.max_owner_bytes:
            message = f"more than {self.max_owner_bytes} bytes of request bodies in flight for "
            return Busy(
                429, message + "this API key or address; retry shortly", "too_many_requests"
            )
        budget = self.max_in_flight_bytes
        # Past the ceiling, only owners under an equal share of it are let in.
        if (
            budget
            and self.in_flight_bytes + more > budget
            and mine + more > budget // len(self.held)
        ):
            message = f"more than {budget} bytes of request bodies in flight; retry shortly"
            return Busy(503, message, "server_busy")
        return None

    def take(self, owner: str, count: int) -> None:
        self.held[owner] += count
        self.in_flight_bytes += count

    def give_back(self, owner: str, count: int) -> None:
        if count:
            self.in_flight_bytes -= count
            left = self.held[owner] - count
            if left:
                self.held[owner] = left
            else:
                del self.held[owner]

    def hold(self, scope: Scope, count: int) -> Busy | None:
        """Take ``count`` bytes for the request or message of ``scope`` (a whole body,
        held alone): None once taken, else the refusal (nothing taken)."""
        owner = _owner(scope)
        if busy := self.over_budget(owner, count):
            return busy
        self.take(owner, count)
        return None

    def release(self, scope: Scope, count: int) -> None:
        """Give back ``count`` bytes :meth:`hold` took for ``scope``."""
        self.give_back(_owner(scope), count)


class BodyLimitGuard:
    """Refuses request bodies over ``max_bytes`` with 413, declared or streamed,
    and bounds the body bytes in flight, per owner and together (``budget``, a
    :class:`BodyBudget`; else one of its own with the two bounds given).

    A streamed body that grows too large looks like a client disconnect to
    the app; whatever the app answers is dropped and the 413 sent instead.

    Parsing, converting and running a body keeps a few times its size alive
    until the response ends, so a body counts from when it arrives until its
    response ends (a stream its client stops reading is closed after
    ``AGENTHOST_SEND_STALL_SECONDS``, which ends it). Past a budget a request
    is refused with ``Retry-After``, before or while its body is read (429 or
    503, as :class:`BodyBudget` says).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        error_for: ErrorFor,
        max_in_flight_bytes: int = 0,
        max_owner_bytes: int = 0,
        budget: BodyBudget | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.error_for = error_for
        self.budget = budget or BodyBudget(
            max_in_flight_bytes=max_in_flight_bytes, max_owner_bytes=max_owner_bytes
        )

    @property
    def in_flight_bytes(self) -> int:
        return self.budget.in_flight_bytes

    @property
    def held(self) -> Counter[str]:
        return self.budget.held

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _first_header(scope, b"content-length")
        size = int(declared) if declared is not None and declared.isdigit() else None
        if size is not None and size > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        owner, budget = _owner(scope), self.budget
        if size and (reason := budget.over_budget(owner, size)):
            await self._busy(scope, receive, send, reason)
            return
        received = held = 0
        too_large = started = False
        busy: Busy | None = None

        async def counting_receive() -> Message:
            nonlocal received, held, too_large, busy
            message = await receive()
            if message["type"] == "http.request":
                chunk = len(message.get("body", b""))
                received += chunk
                if received > self.max_bytes:
                    too_large = True
                    return {"type": "http.disconnect"}
                if chunk and (busy := budget.over_budget(owner, chunk, held)):
                    return {"type": "http.disconnect"}
                held += chunk
                budget.take(owner, chunk)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if (too_large or busy) and not started:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        passes_bodies(scope, guarded_send, send, lambda: started)  # once the start passed
        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not (too_large or busy) or started:
                raise
        finally:
            budget.give_back(owner, held)
        if too_large and not started:
            await self._refuse(scope, receive, send)
        elif busy and not started:
            await self._busy(scope, receive, send, busy)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"request body larger than {self.max_bytes} bytes"
        await self.error_for(scope["path"], 413, message, "request_too_large")(scope, receive, send)

    async def _busy(self, scope: Scope, receive: Receive, send: Send, busy: Busy) -> None:
        response = self.error_for(scope["path"], busy.status, busy.message, busy.code)
        response.headers["retry-after"] = "1"
        response.headers["connection"] = "close"  # the rest of its body is never read
        await response(scope, receive, send)


LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class SiteGuard:
    """One origin policy for every surface, with auth on or off.

    - ``Host`` must be allowed (DNS rebinding): loopback names and ``hosts``
      (a name without a port allows any port; ``*`` allows any host), else 421.
      Names compare case-insensitively (DNS names are). ``check_host=False``
      skips it. ``exempt`` paths (health probes, which Kubernetes sends with
      the pod's IP as ``Host``) skip it too.
    - A browser's ``Origin``, when sent, must be allowed: the request's own
      host (a page this server served), a loopback origin, or one of
      ``origins`` (``*`` allows any), else 403.
    - A state-changing request (``POST``/``PUT``/``PATCH``/``DELETE``) must
      declare its body JSON, else 415, whatever its ``Origin``: a cross-site
      "simple" request can send ``text/plain``, a form, or a body with no
      ``Content-Type`` at all (``fetch(url, {mode: "no-cors", body: blob})``),
      and a page on any loopback port is an allowed origin. JSON is
      ``application/json`` or a ``+json`` type, or only ``application/json``
      under the ``strict_json`` prefixes (MCP's transport takes nothing
      else). A ``POST`` without one passes only on the paths
      ``bodyless(path)`` is true of (cancels and subscriptions, which read
      no body, so cannot carry a prompt), and under the ``untyped`` prefixes
      when it is not a browser's (the acp-sdk client sends its JSON with no
      type): every browser's ``POST`` carries ``Origin`` (``null`` at worst)
      and ``Sec-Fetch-*``. A ``POST`` that ``routed(scope)`` says no route
      takes gets the app's 404 or 405 instead. ``PUT``, ``PATCH`` and
      ``DELETE`` without one pass: no browser sends them cross-site without
      a CORS preflight, no route takes a ``PUT``/``PATCH`` (405 says so) and
      ``DELETE`` takes no body.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: Iterable[str],
        origins: Iterable[str],
        check_host: bool,
        exempt: Iterable[str],
        error_for: ErrorFor,
        strict_json: Iterable[str] = (),
        bodyless: Callable[[str], object] | None = None,
        untyped: Iterable[str] = (),
        routed: Callable[[Scope], bool] | None = None,
    ) -> None:
        self.app = app
        hosts = [h.lower() for h in (*LOCAL_HOSTS, *hosts)]
        self.any_host = "*" in hosts
        self.hosts = frozenset(h for h in hosts if _port_of(h))
        self.names = frozenset(h for h in hosts if not _port_of(h))
        origins = [o.lower().rstrip("/") for o in origins]
        self.any_origin = "*" in origins
        self.origins = frozenset(origins)
        self.check_host = check_host and not self.any_host
        self.exempt = frozenset(exempt)
        self.error_for = error_for
        self.strict_json = tuple(strict_json)
        self.bodyless = bodyless
        self.untyped = tuple(untyped)
        self.routed = routed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = _route_path(scope)
        if path in self.exempt:
            await self.app(scope, receive, send)
            return
        # The first of each header, as Headers.get finds it, in one pass (a missing
        # header costs Headers.get a KeyError raised and caught).
        raw_host = raw_origin = raw_type = None
        fetched = False  # a browser's Sec-Fetch-* metadata
        for name, value in scope["headers"]:
            if name == b"host":
                raw_host = value if raw_host is None else raw_host
            elif name == b"origin":
                raw_origin = value if raw_origin is None else raw_origin
            elif name == b"content-type":
                raw_type = value if raw_type is None else raw_type
            elif name.startswith(b"sec-fetch-"):
                fetched = True
        host = raw_host.decode("latin-1").lower() if raw_host is not None else ""
        origin = raw_origin.decode("latin-1") if raw_origin is not None else None
        refusal = None
        if self.check_host and not self._host_allowed(host):
            refusal = (421, f"the Host header {host!r} is not allowed", "host_not_allowed")
        elif not self._origin_allowed(origin, host):
            refusal = (403, "requests from this Origin are not allowed", "origin_not_allowed")
        elif scope["type"] == "http" and scope["method"] in STATE_CHANGING:
            browser = fetched or raw_origin is not None
            refusal = self._media_refusal(scope, path, raw_type, browser)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message, code = refusal
        await self.error_for(path, status, message, code)(scope, receive, send)

    def _host_allowed(self, host: str) -> bool:
        return host in self.hosts or _name_of(host) in self.names

    def _origin_allowed(self, origin: str | None, host: str) -> bool:
        if origin is None or self.any_origin:
            return True
        origin = origin.lower().rstrip("/")
        if origin in self.origins:
            return True
        scheme, _, netloc = origin.partition("://")
        if scheme not in ("http", "https"):
            return False
        return netloc == host or _name_of(netloc) in LOCAL_HOSTS

    def _media_refusal(
        self, scope: Scope, path: str, raw_type: bytes | None, browser: bool
    ) -> tuple[int, str, str] | None:
        declared = raw_type.decode("latin-1") if raw_type is not None else ""
        media = declared.split(";", 1)[0].strip().lower()
        strict = path.startswith(self.strict_json)
        if not media:
            if scope["method"] != "POST" or (self.bodyless is not None and self.bodyless(path)):
                return None
            if not browser and path.startswith(self.untyped):
                return None
            if self.routed is not None and not self.routed(scope):
                return None
            message = "the request has no Content-Type; send its body as application/json"
        elif media == "application/json" or (not strict and _is_json(media)):
            return None
        else:
            expected = "application/json" if strict else "JSON (application/json)"
            message = f"Content-Type {media!r} is not accepted here; send {expected}"
        return (415, message, "unsupported_media_type")


def _owner(scope: Scope) -> str:
    """Whose budget a request counts against: its principal, else its client address."""
    principal = scope.get("state", {}).get("principal")
    if principal is not None:
        return f"principal {principal}"
    client = scope.get("client")
    return f"address {client[0]}" if client else "address ?"


def _first_header(scope: Scope, name: bytes) -> str | None:
    """The first ``name`` header's value, as ``Headers(scope=scope).get`` gives it."""
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")  # type: ignore[no-any-return]
    return None


def _route_path(scope: Scope) -> str:
    """The path the app routes on: without the ``root_path`` (behind a proxy's prefix)."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def _is_json(media: str) -> bool:
    """``application/json`` or a structured ``+json`` type (``application/a2a+json``)."""
    kind, _, subtype = media.partition("/")
    return media == "application/json" or (kind == "application" and subtype.endswith("+json"))


def _port_of(host: str) -> str:
    """The port of ``host`` (``name:port`` or ``[v6]:port``), or ''."""
    tail = host.rsplit("]", 1)[-1]
    return tail.rpartition(":")[2] if ":" in tail else ""


def _name_of(host: str) -> str:
    port = _port_of(host)
    return host[: -len(port) - 1] if port else host
