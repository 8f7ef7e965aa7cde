"""Building, right after start-up, what start-up deferred to a protocol's first request.

An adapter built on its first request (:class:`~agenthost.adapters.deferred.DeferredAdapter`:
MCP, whose SDK costs about as much CPU as the rest of a start-up) keeps ``/readyz``
fast, but made that first request wait for the build. A served process starts the
build in the background on its first ``/readyz`` 200 — the moment an orchestrator
sees it ready — or :data:`FALLBACK_SECONDS` after it accepts connections if nothing
asks: the first request then usually finds the adapter built, or waits for the
build under way. An app called in-process (tests) builds on the first request only.
"""

from __future__ import annotations

import asyncio

from fastapi import FastAPI

from agenthost.adapters.deferred import DeferredAdapter

FALLBACK_SECONDS = 1.0
"""When nothing asks ``/readyz`` (a process no orchestrator probes): the build starts anyway."""


def warm_up_when_ready(app: FastAPI) -> None:
    """Called once the served process accepts connections: the next ``/readyz`` 200, or
    :data:`FALLBACK_SECONDS`, starts the builds (:func:`warm_up`).

    The fallback runs in a task of its own, not a bare loop callback: the builds start
    in an anyio task group, and anyio can only tell the event loop from inside a task
    (from a ``call_later`` callback it raised ``NoEventLoopError``)."""
    app.state.warm_up_pending = True
    app.state.warm_up_fallback = asyncio.get_running_loop().create_task(
        _warm_up_later(app), name="warm-up"
    )


async def _warm_up_later(app: FastAPI) -> None:
    await asyncio.sleep(FALLBACK_SECONDS)
    warm_up(app)


def warm_up(app: FastAPI) -> None:
    """Start building each deferred adapter in the background, once armed (no-op after)."""
    if not getattr(app.state, "warm_up_pending", False):
        return
    app.state.warm_up_pending = False
    for adapter in app.state.adapters.values():
        if isinstance(adapter, DeferredAdapter):
            adapter.warm_up()
