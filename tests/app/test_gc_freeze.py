"""Once the server is up, what start-up built is frozen out of the collector's sight,
and full collections are ten times rarer.

Full collections otherwise walk the whole start-up heap (~150k objects):
bench/README.md (relay.py) measured GC at 4.1 of 20 s of server CPU; then,
frozen, what 1,000 streams hold (~290k objects) up to 16 times a run.
"""

from __future__ import annotations

import asyncio
import gc

import pytest
from fastapi import FastAPI

from agenthost.app.serving import FULL_COLLECTION_EVERY, build_server
from agenthost.app.settings import Settings
from tests.commands import free_port

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_start_up_objects_are_frozen_after_start_up(anyio_backend: str) -> None:
    gc.unfreeze()
    threshold = gc.get_threshold()
    server = build_server(Settings(port=free_port()), FastAPI())
    serving_task = asyncio.get_running_loop().create_task(server.serve())
    try:
        for _ in range(200):
            await asyncio.sleep(0.01)
            if server.started:
                break
        assert server.started
        assert gc.get_freeze_count() > 10_000
        young, middle, full = gc.get_threshold()
        assert (young, middle) == threshold[:2]
        assert full == FULL_COLLECTION_EVERY > threshold[2]
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving_task, 30)
        gc.unfreeze()
        gc.set_threshold(*threshold)
