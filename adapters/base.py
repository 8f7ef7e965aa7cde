"""The contract between the app and a protocol adapter.

An adapter gets what it needs through :class:`AdapterContext` (never by
importing ``app`` or another adapter), gives the app a router without a
prefix (the app decides where it is mounted), a lifespan, and its protocol's
error shape for the errors the app raises before a request reaches it
(authentication, body size).
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from fastapi import APIRouter
from starlette.responses import Response

from agents import Agent, MemoryManager


@dataclass(frozen=True, slots=True)
class AdapterContext:
    """What the app hands an adapter."""

    agents: Mapping[str, Agent]
    memory: MemoryManager


class Adapter(Protocol):
    """A protocol surface of the server."""

    name: str

    @property
    def router(self) -> APIRouter: ...

    def lifespan(self) -> AbstractAsyncContextManager[Any]: ...

    def error_response(self, status: int, message: str, *, code: str) -> Response:
        """The protocol's own error body for an error raised by the app."""
        ...
