"""Task stores: SQLite survives a restart; the in-memory store stays bounded."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from a2a.server.context import ServerCallContext
from a2a.types import Task, TaskPushNotificationConfig, TaskState, TaskStatus

from agenthost.adapters.a2a.tasks import (
    BoundedPushConfigStore,
    BoundedTaskStore,
    TaskStoreError,
    TaskStores,
)
from agenthost.adapters.a2a.users import PrincipalUser
from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from tests.adapters.a2a.support import V1, a2a_settings, in_process, rpc

pytestmark = pytest.mark.anyio

AGENTS = {"echo": ChatAgent("echo", EchoModel())}


async def test_with_sqlite_a_task_is_readable_after_a_restart(tmp_path: Path) -> None:
    settings = a2a_settings(a2a_grpc_port=0, a2a_task_store=f"sqlite:///{tmp_path}/tasks.db")
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "keep me"}]}
    async with in_process(AGENTS, settings) as http:
        sent = await http.post(
            "/a2a/echo", json=rpc("SendMessage", {"message": message}), headers=V1
        )
        task = sent.json()["result"]["task"]
    async with in_process(AGENTS, settings) as http:
        got = await http.post("/a2a/echo", json=rpc("GetTask", {"id": task["id"]}), headers=V1)
        restored = got.json()["result"]
        assert restored["status"]["state"] == "TASK_STATE_COMPLETED"
        assert restored["artifacts"][0]["parts"][0]["text"] == "keep me"
        listed = await http.get("/a2a/echo/tasks", headers=V1)
        assert [t["id"] for t in listed.json()["tasks"]] == [task["id"]]


def test_an_unknown_task_store_is_refused_with_the_choices() -> None:
    with pytest.raises(TaskStoreError, match="sqlite:///"):
        TaskStores("redis://localhost", max_tasks=1, ttl=1)


def task(task_id: str, state: TaskState) -> Task:
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state))


async def test_the_memory_store_drops_the_oldest_finished_tasks_beyond_its_bound() -> None:
    store = BoundedTaskStore("echo", max_tasks=2, ttl=3600)
    alice = ServerCallContext(user=PrincipalUser("alice"))
    await store.save(task("running", TaskState.TASK_STATE_WORKING), alice)
    for name in ("t1", "t2", "t3"):
        await store.save(task(name, TaskState.TASK_STATE_COMPLETED), alice)
    assert await store.get("t1", alice) is None, "the oldest finished task was kept"
    assert await store.get("t3", alice) is not None
    assert await store.get("running", alice) is not None, "a running task was dropped"


async def test_the_memory_store_drops_finished_tasks_after_their_ttl() -> None:
    store = BoundedTaskStore("echo", max_tasks=100, ttl=0.01)
    bob = ServerCallContext(user=PrincipalUser("bob"))
    await store.save(task("old", TaskState.TASK_STATE_FAILED), bob)
    await anyio.sleep(0.05)
    await store.save(task("new", TaskState.TASK_STATE_COMPLETED), bob)
    assert await store.get("old", bob) is None
    assert await store.get("new", bob) is not None


def big_task(task_id: str, state: TaskState, size: int) -> Task:
    from a2a.types import Message, Part, Role

    history = [Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text="x" * size)])]
    return Task(id=task_id, context_id="c", status=TaskStatus(state=state), history=history)


async def test_the_memory_store_drops_the_oldest_finished_tasks_past_its_byte_budget() -> None:
    pushes = BoundedPushConfigStore("echo", max_bytes=10_000)
    store = BoundedTaskStore("echo", max_tasks=100, ttl=3600, max_bytes=35_000, push_configs=pushes)
    alice = ServerCallContext(user=PrincipalUser("alice"))
    await store.save(big_task("running", TaskState.TASK_STATE_WORKING, 10_000), alice)
    config = TaskPushNotificationConfig(id="p", url="https://hooks.example.com/x")
    await pushes.set_info("t1", config, alice)
    for name in ("t1", "t2", "t3"):
        await store.save(big_task(name, TaskState.TASK_STATE_COMPLETED, 10_000), alice)
    assert await store.get("t1", alice) is None, "the oldest finished task was kept"
    assert await pushes.get_info("t1", alice) == [], "its push configs were kept"
    assert await store.get("t2", alice) is not None
    assert await store.get("running", alice) is not None, "a running task was dropped"
    assert store.bytes <= 35_000 and store.evictions == 1


async def test_push_configs_are_bounded_per_task_and_in_bytes() -> None:
    pushes = BoundedPushConfigStore("echo", max_bytes=5_000)
    bob = ServerCallContext(user=PrincipalUser("bob"))
    for n in range(15):
        config = TaskPushNotificationConfig(id=f"p{n}", url=f"https://hooks.example.com/{n}")
        await pushes.set_info("t1", config, bob)
    assert [c.id for c in await pushes.get_info("t1", bob)] == [f"p{n}" for n in range(5, 15)]
    for n in range(20):  # 2,000-byte configs: two fit in 5,000 bytes
        config = TaskPushNotificationConfig(id="p", url="https://h.example.com/" + "y" * 2000)
        await pushes.set_info(f"task-{n}", config, bob)
    assert pushes.bytes <= 5_000
    assert await pushes.get_info("t1", bob) == []
    assert await pushes.get_info("task-19", bob) != []


async def test_a_running_task_is_sized_when_it_comes_in_and_when_it_goes_idle() -> None:
    store = BoundedTaskStore("echo", max_tasks=100, ttl=3600, max_bytes=1_000_000)
    alice = ServerCallContext(user=PrincipalUser("alice"))
    first = big_task("t", TaskState.TASK_STATE_WORKING, 100)
    await store.save(first, alice)
    assert store.bytes == first.ByteSize()
    for size in (1_000, 2_000, 3_000):  # a stream's saves: the task grows, not re-sized
        await store.save(big_task("t", TaskState.TASK_STATE_WORKING, size), alice)
    assert store.bytes == first.ByteSize()
    done = big_task("t", TaskState.TASK_STATE_COMPLETED, 4_000)
    await store.save(done, alice)
    assert store.bytes == done.ByteSize()
