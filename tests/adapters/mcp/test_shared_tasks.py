"""MCP task records in a real Redis: two stores (two replicas' worth) see one task.

In process, so that the shared paths are measured: a cancel from the other
store stops the run here over the cancel channel, an answer given to the
other store resumes the run there, and a working record nobody holds the
lease of reads ``failed``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from agenthost.adapters.mcp.tasks import NAMESPACE, ORPHANED, TaskRecord, TaskStore
from agenthost.app.redis_memory import RedisMemoryManager, redis_client
from tests.stores import RedisServer, redis  # noqa: F401 (fixture)

pytestmark = pytest.mark.anyio


@pytest.fixture
async def stores(redis: RedisServer) -> AsyncIterator[tuple[TaskStore, TaskStore]]:  # noqa: F811
    namespace = f"tasks-{uuid.uuid4().hex}"
    memories = [
        RedisMemoryManager(redis_client(redis.url, timeout=5), namespace, ttl=60) for _ in "ab"
    ]
    pair = (
        TaskStore(memory=memories[0], lease_seconds=1.0),
        TaskStore(memory=memories[1], lease_seconds=1.0),
    )
    async with anyio.create_task_group() as group:
        for store in pair:
            group.start_soon(store.listen)
        # Both subscribed to the cancel channel before anything is published.
        channel = f"{memories[0].prefix}topic:cancel:{NAMESPACE}"
        for _ in range(1000):
            ((_, listeners),) = await memories[0].client.pubsub_numsub(channel)
            if listeners == 2:
                break
            await anyio.sleep(0.01)
        else:
            raise AssertionError("the stores never subscribed to the cancel channel")
        yield pair
        for store in pair:
            await store.close()
        group.cancel_scope.cancel()
    for memory in memories:
        await memory.aclose()


async def status_of(store: TaskStore, task_id: str, *wanted: str) -> dict[str, Any]:
    for _ in range(1000):  # another store's change: polled, as a client would
        task = await store.get("alice", task_id)
        if task["status"] in wanted:
            return task
        await anyio.sleep(0.02)
    raise AssertionError(f"the task never became {wanted}")


async def test_a_cancel_from_the_other_store_stops_the_run_here(
    stores: tuple[TaskStore, TaskStore],
) -> None:
    here, there = stores
    stopped = anyio.Event()

    async def forever() -> dict[str, Any]:
        try:
            await anyio.sleep(60)
        finally:
            stopped.set()
        return {}

    created = await here.start("alice", {"name": "x"}, forever)
    assert (await there.get("alice", created["taskId"]))["status"] == "working"
    with pytest.raises(MCPError):
        await there.get("bob", created["taskId"])  # another key's task is unknown
    await there.cancel("alice", created["taskId"])
    with anyio.fail_after(20):
        await stopped.wait()
    assert (await here.get("alice", created["taskId"]))["status"] == "cancelled"


async def test_an_answer_given_to_the_other_store_resumes_the_run_there(
    stores: tuple[TaskStore, TaskStore],
) -> None:
    here, there = stores
    asked = {"q": {"method": "elicitation/create", "params": {"message": "Name?"}}}

    async def asks() -> dict[str, Any]:
        return {"resultType": "input_required", "inputRequests": asked, "requestState": "s/q"}

    resumed: list[dict[str, Any]] = []

    def resume(call: dict[str, Any]) -> Any:
        resumed.append(call)

        async def answer() -> dict[str, Any]:
            return {"content": [{"type": "text", "text": "hi Ada"}], "resultType": "complete"}

        return answer

    created = await here.start("alice", {"name": "x", "arguments": {}}, asks)
    waiting = await status_of(there, created["taskId"], "input_required")
    (key,) = waiting["inputRequests"]
    response = {"action": "accept", "content": {"answer": "Ada"}}
    await there.update("alice", created["taskId"], {"other": {"x": 1}}, resume)  # ignored
    await there.update("alice", created["taskId"], {key: response}, resume)
    done = await status_of(here, created["taskId"], "completed")
    assert done["result"]["content"][0]["text"] == "hi Ada"
    assert resumed == [
        {"name": "x", "arguments": {}, "inputResponses": {"q": response}, "requestState": "s/q"}
    ]


async def test_a_working_task_whose_lease_nobody_holds_reads_failed(
    stores: tuple[TaskStore, TaskStore],
) -> None:
    here, _ = stores
    # As a replica leaves it when it dies mid-run: working, and no lease.
    record = TaskRecord("orphan", "alice", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")
    await here.records.create(record)
    task = await here.get("alice", "orphan")
    assert task["status"] == "failed"
    assert task["error"]["message"] == ORPHANED
