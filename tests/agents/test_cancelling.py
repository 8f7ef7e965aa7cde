"""cancel_and_wait: the task stopped, and a cancel of the caller kept."""

from __future__ import annotations

import asyncio

import pytest

from agenthost.agents.cancelling import cancel_and_wait

pytestmark = pytest.mark.anyio


async def test_the_task_is_stopped_and_the_caller_goes_on() -> None:
    task = asyncio.create_task(asyncio.sleep(60))
    await cancel_and_wait(task)
    assert task.cancelled()


async def test_a_cancel_of_the_caller_while_it_waits_propagates() -> None:
    started = asyncio.Event()

    async def stubborn() -> None:  # takes a while to end once cancelled
        try:
            await asyncio.sleep(60)
        finally:
            started.set()
            await asyncio.shield(asyncio.sleep(0.2))

    async def stopper(task: asyncio.Task[None]) -> str:
        await cancel_and_wait(task)
        return "went on"

    helper = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    caller = asyncio.create_task(stopper(helper))
    await started.wait()
    caller.cancel()  # lands while the caller waits for the helper to end
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert caller.cancelled()
