"""uvicorn with a drain period: readiness goes first, the listener later.

On SIGTERM (or Ctrl-C) ``/readyz`` answers 503 at once, so a load balancer
stops sending new requests, while the server keeps serving for
``drain_seconds``; then uvicorn's own graceful shutdown runs (in-flight
requests finish, lifespans close). A second signal exits without waiting.
"""

from __future__ import annotations

import asyncio
import logging
from types import FrameType

import uvicorn
from fastapi import FastAPI

logger = logging.getLogger("agenthost")


class DrainingServer(uvicorn.Server):
    """A uvicorn server that turns not-ready before it stops listening."""

    def __init__(self, config: uvicorn.Config, app: FastAPI, *, drain_seconds: float) -> None:
        super().__init__(config)
        self.app = app
        self.drain_seconds = drain_seconds
        self._draining = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.app.state.ready = False
        if self._draining or self.drain_seconds <= 0:
            super().handle_exit(sig, frame)
            return
        self._draining = True
        logger.info("draining for %.1f s before shutting down", self.drain_seconds)
        loop = asyncio.get_event_loop()
        # Runs inside a signal handler: hand the timer to the loop thread-safely.
        loop.call_soon_threadsafe(
            loop.call_later, self.drain_seconds, super().handle_exit, sig, frame
        )
