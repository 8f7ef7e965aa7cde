"""Each request's id and protocol, and log lines as JSON (``AGENTHOST_LOG_FORMAT=json``).

:class:`RequestContext` (pure ASGI) keeps a client's ``X-Request-ID`` (or
makes one), echoes it on the response, and sets the request's id and
protocol for everything the request runs: log lines, and the metrics'
``protocol`` label. :class:`JSONFormatter` writes one object per line:
``time``, ``level``, ``logger``, ``message``, and ``request_id``,
``protocol``, ``trace_id``/``span_id`` (when a span is recording) where
known, plus a record's ``tool_event`` fields and ``exc_info``.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agenthost.adapters.sse import passes_bodies
from agenthost.app.metrics import current_protocol

request_id: ContextVar[str | None] = ContextVar("agenthost_request_id", default=None)
"""The current request's id (``X-Request-ID``), or None outside a request."""

HEADER = b"x-request-id"
MAX_ID_CHARS = 128


def _usable(value: bytes) -> str | None:
    # A client's id goes into our logs: printable ASCII only, and short.
    if not value or len(value) > MAX_ID_CHARS or not all(0x21 <= b <= 0x7E for b in value):
        return None
    return value.decode("ascii")


class RequestContext:
    """Sets each HTTP request's id and protocol (by mount prefix), and echoes the id."""

    def __init__(self, app: ASGIApp, prefixes: Mapping[str, str]) -> None:
        """``prefixes`` maps a mount prefix (``/v1``) to its protocol (``openai``)."""
        self.app = app
        self.prefixes = tuple(prefixes.items())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = None
        for name, value in scope["headers"]:
            if name == HEADER:
                given = _usable(value)
                break
        id = given or os.urandom(8).hex()
        path: str = scope["path"]
        protocol = "http"
        for prefix, name in self.prefixes:
            if path == prefix or path.startswith(prefix + "/"):
                protocol = name
                break
        id_token, protocol_token = request_id.set(id), current_protocol.set(protocol)
        header = (HEADER, id.encode("ascii"))

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        passes_bodies(scope, send_with_id, send)  # only the start changes
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id.reset(id_token)
            current_protocol.reset(protocol_token)


# ``color_message``: uvicorn's copy of its message with ANSI colours, for terminals only.
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "color_message",
}


class JSONFormatter(logging.Formatter):
    """One JSON object per record (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if (id := request_id.get()) is not None:
            line["request_id"] = id
            line["protocol"] = current_protocol.get()
        line.update(_trace_ids())
        for key, value in vars(record).items():
            if key not in _RESERVED and not key.startswith("_"):
                line[key] = value  # fields passed as ``extra`` (tool events)
        if record.exc_info:
            line["exc_info"] = self.formatException(record.exc_info)
        return orjson.dumps(line, default=str).decode()


def _trace_ids() -> dict[str, str]:
    # Only once tracing is on (app/tracing.py imported it): off, nothing is imported.
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return {}
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}


def use_json(loggers: Iterable[str] = ("", "uvicorn", "uvicorn.access")) -> None:
    """Write the records of ``loggers``' handlers (root and uvicorn's) as JSON lines."""
    formatter = JSONFormatter()
    for name in loggers:
        for handler in logging.getLogger(name).handlers:
            handler.setFormatter(formatter)
