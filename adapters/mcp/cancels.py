"""Stopping a ``tools/call`` that another request names, in stateless mode.

In stateful mode the SDK's session sees a ``notifications/cancelled`` and
stops the request it names. In stateless mode each POST gets a fresh
server, so the notification (always a POST of its own) would reach one that
never saw the call: it got 202 and the run went on. :class:`RunningCalls`
keeps every running call's cancel scope under ``(principal, request id)``;
the endpoint reads a cancel notification before the SDK does and cancels
the scope it names (the model stream is closed, the tools are cancelled).
Only the caller's own principal can name a call. With a store shared by
replicas, a cancel for a call this replica does not run goes to the others
over the cross-replica cancel channel.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError

from agenthost.adapters.cancels import CancelChannel

logger = logging.getLogger("agenthost.mcp")

REQUEST_CANCELLED = -32800
"""What the SDK's 2025-era transport answers a cancelled request with (LSP's code)."""


def cancelled_id(message: Any) -> str | None:
    """The request id a ``notifications/cancelled`` message names, as a string key."""
    if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
        return None
    params = message.get("params")
    request_id = params.get("requestId") if isinstance(params, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return str(request_id)


class RunningCalls:
    """The cancel scopes of the calls running here, by principal and request id."""

    def __init__(self, channel: CancelChannel | None = None) -> None:
        self._scopes: dict[tuple[str, str], list[anyio.CancelScope]] = {}
        self.channel = channel

    @contextmanager
    def running(self, principal: str, request_id: object) -> Iterator[None]:
        """Run the body cancellable by :meth:`cancel`; a cancelled body raises -32800."""
        key = (principal, str(request_id))
        with anyio.CancelScope() as scope:
            self._scopes.setdefault(key, []).append(scope)
            try:
                yield
            finally:
                scopes = self._scopes[key]
                scopes.remove(scope)
                if not scopes:
                    del self._scopes[key]
        if scope.cancelled_caught:
            raise MCPError(REQUEST_CANCELLED, "Request cancelled")

    def stop(self, principal: str, request_id: str) -> bool:
        """Cancel the calls of ``request_id`` by ``principal`` running here; any found?"""
        scopes = self._scopes.get((principal, request_id), ())
        for scope in scopes:
            scope.cancel()
        return bool(scopes)

    async def cancel(self, principal: str, request_id: str) -> None:
        """Stop the call here, or ask the other replicas to."""
        if not self.stop(principal, request_id) and self.channel is not None:
            try:
                await self.channel.send(principal, request_id)
            except Exception:
                logger.exception("a cancel could not be sent to the other replicas")

    async def listen(self) -> None:
        """Stop the calls other replicas were asked to cancel, until cancelled."""
        if self.channel is None:
            return

        async def stop(principal: str, request_id: str) -> None:
            self.stop(principal, request_id)

        await self.channel.listen(stop)
