"""The MCP surface: every agent as a tool over streamable HTTP.

The SDK's session manager answers both protocol eras on one endpoint: the
``initialize`` handshake (up to 2025-11-25, optionally with
``Mcp-Session-Id`` sessions) and the stateless 2026-07-28 requests. The
app's Host, Origin and Content-Type checks (one for every surface) and its
auth layer run before it; the principal it found is handed to the SDK as
the authenticated user, so a handshake-era MCP session can only be used
with the key that opened it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from fastapi import APIRouter
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.bodies import send_jsonrpc_error
from agenthost.adapters.cancels import CancelChannel, SharedMemory, is_shared
from agenthost.adapters.leases import DEFAULT_LEASE_SECONDS
from agenthost.adapters.mcp import REQUEST_RULES, error_response
from agenthost.adapters.mcp.backchannel import (
    CallStream,
    Introductions,
    Relay,
    Replies,
    current_stream,
    is_response,
)
from agenthost.adapters.mcp.cancels import RunningCalls, cancelled_id
from agenthost.adapters.mcp.events import RecentEvents
from agenthost.adapters.mcp.keepalive import follow_keepalive
from agenthost.adapters.mcp.requests import refuse_invalid
from agenthost.adapters.mcp.server import ServerOptions, build_server
from agenthost.adapters.mcp.tasks import NAMESPACE as TASKS
from agenthost.adapters.mcp.tasks import TaskStore

logger = logging.getLogger("agenthost.mcp")

# The SDK's transport logs every stateless request's end at INFO ("Terminating
# session: None"): one useless line per call. Keep its warnings, unless the
# operator set a level for it.
_transport_log = logging.getLogger("mcp.server.streamable_http")
if _transport_log.level == logging.NOTSET:
    _transport_log.setLevel(logging.WARNING)


@dataclass(frozen=True, slots=True)
class MCPOptions:
    """Transport and behaviour options: the MCP settings, and from the context the request
    body bound, the run lease and the protocols serving each agent (``create`` fills them)."""

    stateless: bool = True
    allowed_hosts: Sequence[str] = ()
    allowed_origins: Sequence[str] = ()
    progress_interval: float = 0.1
    session_idle_timeout: float = 1800.0
    max_sessions: int = 1000
    max_body_bytes: int = 4 * 1024 * 1024
    sse_retry_ms: int = 1000
    max_tasks: int = 1000
    task_ttl: float = 3600.0
    run_lease_seconds: float = DEFAULT_LEASE_SECONDS
    protocols: Mapping[str, Sequence[str]] = field(default_factory=dict)


# The SDK's Host and Origin check is off: the app's one check for every surface applies
# to /mcp too, with MCP's allowed hosts and origins (``Settings.site_hosts``). The SDK's
# compared names case-sensitively (``Host: LOCALHOST:8000`` got 421 on /mcp only), knew
# neither AGENTHOST_ALLOWED_HOSTS nor the A2A public URL, and answered in plain text.
TRANSPORT_SECURITY: Final = TransportSecuritySettings(enable_dns_rebinding_protection=False)


class MCPAdapter:
    """Serves every exposed agent as an MCP tool at the app's prefix (``/mcp``)."""

    root_router: APIRouter | None = None

    name = "mcp"
    request_rules = REQUEST_RULES
    # MCP clients POST to /mcp, and some refuse to follow a redirect to /mcp/.
    at_bare_prefix = True

    def __init__(self, context: AdapterContext, options: MCPOptions | None = None) -> None:
        options = options or MCPOptions()
        self.context = context
        # Stateful sessions see their own cancels; stateless requests need the table.
        self.calls = (
            RunningCalls(CancelChannel.of(context.memory, "mcp")) if options.stateless else None
        )
        # Tasks: in a store the replicas share when there is one (any replica answers).
        shared = is_shared(context.memory) and context.new_memory is not None
        self.tasks = TaskStore(
            options.max_tasks,
            options.task_ttl,
            memory=context.new_memory(TASKS) if shared and context.new_memory else None,
            lease_seconds=options.run_lease_seconds,
            runs=context.durable,
        )
        self.server = build_server(
            context,
            ServerOptions(
                options.progress_interval,
                options.protocols,
                self.calls,
                options.max_sessions,
                options.session_idle_timeout,
                self.tasks,
            ),
        )
        self.manager = StreamableHTTPSessionManager(
            app=self.server,
            # Each SSE stream opens with a priming event and the reconnect delay.
            event_store=RecentEvents(),
            retry_interval=options.sse_retry_ms,
            stateless=options.stateless,
            security_settings=TRANSPORT_SECURITY,
            session_idle_timeout=options.session_idle_timeout,
            max_sessions=options.max_sessions,
            max_request_body_size=options.max_body_bytes,
        )
        self._router = APIRouter(tags=["mcp"])
        # A router's root; the app also answers it at the bare prefix (POST /mcp, no redirect).
        # Stateless handshake-era calls ask their client on their own stream.
        self.replies = Replies() if options.stateless else None
        introductions = Introductions(options.max_sessions, options.session_idle_timeout)
        memory = context.memory
        self.relay = (
            Relay(memory, self.replies, introductions)
            if self.replies is not None and isinstance(memory, SharedMemory) and is_shared(memory)
            else None
        )
        endpoint = _Endpoint(self.manager, self.calls, self.replies, introductions, self.relay)
        self._router.routes.append(Route("/", endpoint, include_in_schema=False))

    @property
    def router(self) -> APIRouter:
        return self._router

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.manager.run(), anyio.create_task_group() as group:
            if self.calls is not None and self.calls.channel is not None:
                group.start_soon(self.calls.listen)
            if self.relay is not None:
                group.start_soon(self.relay.listen)
            group.start_soon(self.tasks.listen)  # cancels of tasks from other replicas
            try:
                yield
            finally:
                await self.tasks.close()  # a task's run does not outlive the app
            group.cancel_scope.cancel()

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        """A JSON-RPC error without an id, as the SDK answers transport-level refusals."""
        return error_response(status, message, code)


class _Endpoint:
    """The SDK's streamable-HTTP handler, told who the caller is.

    Header values reach it trimmed (HTTP's optional whitespace around a
    value is not part of it; uvicorn's httptools parser keeps trailing
    spaces, and the SDK compares ``Mcp-Name`` and the like byte for byte).
    In stateless mode it also applies ``notifications/cancelled``
    (:mod:`adapters.mcp.cancels`), hands a client's answer to a server
    request to the call waiting for it, and gives each POST's call a
    stream to send such requests on (:mod:`adapters.mcp.backchannel`).
    """

    __slots__ = ("calls", "introductions", "manager", "relay", "replies")

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        calls: RunningCalls | None,
        replies: Replies | None = None,
        introductions: Introductions | None = None,
        relay: Relay | None = None,
    ) -> None:
        self.manager = manager
        self.calls = calls
        self.replies = replies
        self.introductions = introductions or Introductions()
        self.relay = relay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        follow_keepalive(scope)
        scope = {**scope, "headers": trimmed(scope["headers"])}
        principal = principal_of(scope)
        # The SDK binds a handshake-era session to the user that opened it.
        token = AccessToken(token="", client_id=principal, scopes=[])
        scope["user"] = AuthenticatedUser(token)
        if scope["method"] == "POST":
            checked = await refuse_invalid(scope, receive, send)
            if checked is None:
                return
            receive = checked.receive
            if self.calls is not None and (request_id := cancelled_id(checked.message)):
                await self.calls.cancel(principal, request_id)
            if self.replies is not None and is_response(checked.message):
                await self._reply(principal, checked.message, send)
                return
            if self.replies is not None:
                declared = self.introductions.remember(principal, checked.message)
                if declared is not None and self.relay is not None:
                    await _relayed(self.relay.introduce(principal, declared))
                capabilities = self.introductions.of(principal)
                stream = CallStream(send, principal, self.replies, capabilities)
                serving = current_stream.set(stream)
                try:
                    await self.manager.handle_request(scope, receive, stream.send)
                finally:
                    current_stream.reset(serving)
                return
        await self.manager.handle_request(scope, receive, send)

    async def _reply(self, principal: str, message: dict[str, Any], send: Send) -> None:
        """A client's answer to a server request: to the call waiting for it, or 404."""
        assert self.replies is not None
        delivered = self.replies.deliver(principal, message)
        if not delivered and self.relay is not None and self.replies.elsewhere(message.get("id")):
            delivered = await _relayed(self.relay.reply(principal, message))
        if delivered:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await send_jsonrpc_error(
            send, 404, -32600, "Invalid Request: no request of this server awaits this response"
        )


async def _relayed(sent: Awaitable[None]) -> bool:
    try:
        await sent
    except Exception:
        logger.exception("a message could not be relayed to the other replicas")
        return False
    return True


def trimmed(headers: Sequence[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The header values without the spaces and tabs around them."""
    return [(name, value.strip(b" \t")) for name, value in headers]
