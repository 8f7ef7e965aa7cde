"""save_shield: a save that started finishes when an anyio scope around it is cancelled,
or when a disconnect watch cancels its task; it opens an anyio shield only where an anyio
scope holds the task (anyio_scope_holds, which reads anyio's private task table: every case
that sets or clears the record is checked here)."""

from __future__ import annotations

import asyncio

import anyio
import anyio.lowlevel
import pytest

from agenthost.agents.shields import anyio_scope_holds, cancel, save_shield

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


def _holds() -> bool:
    task = asyncio.current_task()
    assert task is not None
    return anyio_scope_holds(task)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_no_scope_holds_a_bare_task(anyio_backend: str) -> None:
    # uvicorn's request task: made by loop.create_task, no anyio scope entered.
    answers: list[bool] = []

    async def request() -> None:
        answers.append(_holds())
        with anyio.CancelScope():
            answers.append(_holds())
            with anyio.move_on_after(10):
                answers.append(_holds())
                await anyio.lowlevel.checkpoint()
            answers.append(_holds())
            await anyio.lowlevel.checkpoint()
        answers.append(_holds())  # past the outermost scope: none again
        async with anyio.create_task_group() as group:
            answers.append(_holds())  # the group's host task is in its scope
            group.start_soon(child)
        answers.append(_holds())

    async def child() -> None:
        answers.append(_holds())  # a task group's child: its group's scope

    await asyncio.get_running_loop().create_task(request())
    assert answers == [False, True, True, True, False, True, True, False]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_scope_holds_a_task_a_group_started(anyio_backend: str) -> None:
    answers: list[bool] = []

    async def child(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        answers.append(_holds())
        task_status.started()
        await anyio.lowlevel.checkpoint()
        answers.append(_holds())  # moved to the group that awaited start()

    async def request() -> None:
        async with anyio.create_task_group() as group:
            await group.start(child)

    await asyncio.get_running_loop().create_task(request())
    assert answers == [True, True]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_save_in_a_bare_task_opens_no_anyio_scope(anyio_backend: str) -> None:
    # An anyio shield opened there would be the task's recorded scope inside the section.
    answers: list[bool] = []

    async def request() -> None:
        with save_shield():
            answers.append(_holds())
        with anyio.CancelScope(), save_shield():
            answers.append(_holds())
            await anyio.lowlevel.checkpoint()

    await asyncio.get_running_loop().create_task(request())
    assert answers == [False, True]
