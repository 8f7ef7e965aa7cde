"""save_shield: a save that started finishes when an anyio scope around it is cancelled,
or when a disconnect watch cancels its task."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from agenthost.agents.shields import cancel, save_shield

pytestmark = pytest.mark.anyio


async def _save(saving: anyio.Event, log: list[str]) -> None:
    with save_shield():
        saving.set()
        await anyio.sleep(0.05)  # a save that waits (a store round trip)
        log.append("saved")
    await anyio.sleep(1)  # the cancel lands here, after the save
    log.append("not cancelled")


async def test_a_task_group_cancel_waits_for_the_save() -> None:
    log: list[str] = []
    saving = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_save, saving, log)
        await saving.wait()
        group.cancel_scope.cancel()
    assert log == ["saved"]


async def test_a_cancelled_scope_in_the_same_task_waits_for_the_save() -> None:
    log: list[str] = []
    saving = anyio.Event()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(_cancel_when, saving, scope)
            await _save(saving, log)
    assert scope.cancelled_caught
    assert log == ["saved"]


async def _cancel_when(saving: anyio.Event, scope: anyio.CancelScope) -> None:
    await saving.wait()
    scope.cancel()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_disconnect_watch_cancel_waits_for_the_save(anyio_backend: str) -> None:
    # The disconnect watches cancel a bare asyncio task (no anyio scope to
    # shield from): through shields.cancel, the save still finishes first.
    log: list[str] = []
    saving = anyio.Event()
    task = asyncio.get_running_loop().create_task(_save(saving, log))
    await saving.wait()
    cancel(task)
    with pytest.raises(asyncio.CancelledError):
        await task
    assert log == ["saved"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_cancel_outside_a_save_lands_at_once(anyio_backend: str) -> None:
    started = asyncio.Event()

    async def waiting() -> None:
        started.set()
        await asyncio.sleep(10)

    task = asyncio.get_running_loop().create_task(waiting())
    await started.wait()
    cancel(task)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
