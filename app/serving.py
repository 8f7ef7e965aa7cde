"""uvicorn with limits, a drain period and a clean end of every run.

On SIGTERM (or Ctrl-C) ``/readyz`` answers 503 at once, so a load balancer
stops sending new requests, while the server keeps serving for
``drain_seconds``; then the listener closes and in-flight requests get
``graceful_shutdown_seconds`` to finish. Runs still going then are
interrupted (``agents.limits``): each protocol ends its stream with its own
error event (and ``[DONE]`` on Chat Completions) instead of a cut body, and
the process exits 0.

Nothing can hold the process past ``drain_seconds + graceful_shutdown_seconds +
shutdown_margin_seconds`` after the signal: a watchdog thread
(:class:`~agenthost.app.watchdog.ShutdownWatchdog`) exits it then, with a log line
naming where the event loop was stuck (a tool that blocks it, say), and a second
SIGTERM or SIGINT exits at once. Both exit non-zero (1, and 128 + the signal).

That is the one drain for every protocol. sse-starlette, which streams the
A2A SDK's and the MCP SDK's SSE bodies, would cancel each of its streams as
soon as uvicorn sees the signal (it patches ``Server.handle_exit``), cutting
A2A JSON-RPC, HTTP+JSON and MCP streams mid-body 0.1 s after SIGTERM: its
automatic drain is turned off here (``AppStatus``'s documented switch), and
its streams told to stop (``AppStatus.should_exit``) only after the
interrupted runs have had :data:`SSE_CLOSE_SECONDS` for their last events.
The streams still open then (those no run feeds, such as a stateful MCP
session's GET stream) first get their last chunk (:mod:`agenthost.app.streams`):
they end, rather than being cut, and their clients may reconnect elsewhere.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import resource
import signal
import socket
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from types import FrameType

import uvicorn
from fastapi import FastAPI

from agenthost.app.connections import ConnectionLimits, LimitedHTTPProtocol, ResponseTracking
from agenthost.app.settings import Settings
from agenthost.app.streams import OpenStreams
from agenthost.app.warm_up import warm_up_when_ready
from agenthost.app.watchdog import ShutdownWatchdog

logger = logging.getLogger("agenthost")

# Time for interrupted runs to write their last events before uvicorn cancels tasks.
FINAL_EVENTS_SECONDS = 5.0
# Of which, before SSE streams that are still open (no run feeds them) are closed.
SSE_CLOSE_SECONDS = 1.0
# What uvicorn's Server.capture_signals listens to.
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Young collections between two full ones (CPython's default: 10); see DrainingServer.startup.
FULL_COLLECTION_EVERY = 100


def _sse_streams(should_exit: bool | None = None) -> None:
    """Hand sse-starlette's streams to the drain; ``should_exit`` ends them (or resets)."""
    try:
        from sse_starlette.sse import AppStatus
    except ImportError:  # no protocol that streams through it is installed
        return
    AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
    if should_exit is not None:
        AppStatus.should_exit = should_exit


def raise_open_files_limit() -> tuple[int, int]:
    """Raise the soft open-files limit to the hard one (as Go's runtime does).

    A default soft limit of 1,024 would otherwise cap connections long
    before ``max_connections``. Returns ``(before, after)``.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return soft, hard
    return soft, soft


def build_server(settings: Settings, app: FastAPI) -> DrainingServer:
    """uvicorn configured with every limit of ``settings``."""
    limits = ConnectionLimits(
        header_timeout=settings.header_timeout,
        body_timeout=settings.body_timeout,
        max_header_bytes=settings.max_header_bytes,
        max_headers=settings.max_headers,
        max_connections=settings.max_connections,
        max_connections_per_client=settings.max_connections_per_client,
        send_stall_timeout=settings.send_stall_seconds,
    )
    streams = OpenStreams(app)
    config = uvicorn.Config(
        ResponseTracking(streams),  # tells LimitedHTTPProtocol when responses end
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=settings.access_log,
        http=LimitedHTTPProtocol.with_limits(limits),
        backlog=settings.backlog,
        timeout_keep_alive=settings.keep_alive_seconds,  # type: ignore[arg-type]
        timeout_graceful_shutdown=int(settings.graceful_shutdown_seconds + FINAL_EVENTS_SECONDS),
    )
    return DrainingServer(
        config,
        app,
        drain_seconds=settings.drain_seconds,
        grace_seconds=settings.graceful_shutdown_seconds,
        margin_seconds=settings.shutdown_margin_seconds,
        streams=streams,
    )


class DrainingServer(uvicorn.Server):
    """A uvicorn server that turns not-ready first and ends runs cleanly last."""

    def __init__(
        self,
        config: uvicorn.Config,
        app: FastAPI,
        *,
        drain_seconds: float,
        grace_seconds: float = 30.0,
        margin_seconds: float = 8.0,
        streams: OpenStreams | None = None,
    ) -> None:
        super().__init__(config)
        self.app = app
        self.drain_seconds = drain_seconds
        self.grace_seconds = grace_seconds
        self.watchdog = ShutdownWatchdog(
            drain_seconds + grace_seconds + margin_seconds,
            f"drain {drain_seconds:g} s + grace {grace_seconds:g} s + margin {margin_seconds:g} s",
        )
        self.streams = streams
        self._signalled = False
        self._closing: asyncio.Task[None] | None = None
        _sse_streams(should_exit=False)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.app.state.ready = False
        if self._signalled:
            self.watchdog.force(sig)
            return
        self._signalled = True
        self.watchdog.start()
        if self.drain_seconds <= 0:
            super().handle_exit(sig, frame)
            return
        logger.info("draining for %.1f s before shutting down", self.drain_seconds)
        loop = asyncio.get_event_loop()
        # Runs inside a signal handler: hand the timer to the loop thread-safely.
        loop.call_soon_threadsafe(
            loop.call_later, self.drain_seconds, super().handle_exit, sig, frame
        )

    # Called once the server accepts (app started, socket listening): a worker's ready signal.
    on_started: Callable[[], None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.should_exit and hasattr(self.app.state, "adapters"):  # not a bare app
            warm_up_when_ready(self.app)
        if self.on_started is not None and not self.should_exit:
            self.on_started()
        # What start-up built (modules, classes, the app, the agents: ~150k
        # objects) lives as long as the process: out of the collector's sight,
        # full collections no longer walk it (bench/README.md, relay.py: GC
        # took 4.1 of 20 s of server CPU relaying 1,000 streams, 1.3 s frozen).
        # Freezing takes microseconds; a gc.collect() first would pause the
        # server ~90 ms (a /healthz probe saw it) to free a few dozen objects.
        gc.freeze()
        # What is left is what requests hold: 1,000 streams keep ~290k objects,
        # and CPython's default walked them all (0.1-0.5 s each, every stream
        # stalled) up to 16 times in a run of bench/relay.py, most finding
        # nothing to free. Ten times fewer full collections: the cycles an
        # ended stream leaves (~60 objects) wait longer for one (peak RSS
        # +2-10 MB in that run); young collections go on as before.
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        timer = asyncio.get_running_loop().call_later(self.grace_seconds, self._interrupt_runs)
        try:
            await super().shutdown(sockets)
        finally:
            timer.cancel()

    def _interrupt_runs(self) -> None:
        loop = asyncio.get_running_loop()
        loop.call_later(SSE_CLOSE_SECONDS, self._close_streams)
        count = self.app.state.host.interrupt_runs("the server is shutting down; retry the request")
        if count:
            logger.warning(
                "interrupted %d runs still going after %.1f s", count, self.grace_seconds
            )

    def _close_streams(self) -> None:
        self._closing = asyncio.create_task(self._end_streams())

    async def _end_streams(self) -> None:
        if self.streams is not None:
            count = await self.streams.end_all()
            if count:
                logger.info("ended %d event streams still open (no run fed them)", count)
        _sse_streams(should_exit=True)  # and cancels what is left of them

    @contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """uvicorn's, without raising the signal again once the server has stopped.

        uvicorn re-raises a captured signal after a graceful shutdown, so the
        process would end "killed by SIGTERM"; a completed drain is a clean exit.
        """
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach the main thread only
            return
        # signal.signal rather than the loop's handlers: the previous ones come back after.
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in HANDLED_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
