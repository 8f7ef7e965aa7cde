"""Durable MCP tasks across real replicas: a task outlives its replica.

Two ``agenthost serve`` processes share a real Redis (task records and the
run log). A task whose agent ran a tool with a side effect (a counter in a
file) and is streaming its answer loses its replica to ``kill -9``; polled
on the other replica it reads ``working`` until that replica claims the run
(its lease expired) and resumes it from its last finished step, then
``completed`` with the whole answer, and the tool ran once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scale.durable_agents import ANSWER
from tests.scale.test_mcp_tasks import get, rpc
from tests.scale.test_replicas import Replica, replicas
from tests.stores import RedisServer, redis  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow

CONFIG = (
    "agents:\n  - {name: counting, import: 'tests.scale.durable_agents:counting'}\n"
    "  - {name: fragile, import: 'tests.scale.durable_agents:fragile', durable: false}\n"
)
LEASE = 2.0


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory,
    redis: RedisServer,  # noqa: F811
) -> Iterator[tuple[list[Replica], Path]]:
    folder = tmp_path_factory.mktemp("durable-mcp")
    counter = folder / "counter"
    with replicas(
        folder,
        2,
        config=CONFIG,
        AGENTHOST_ADAPTERS="mcp",
        AGENTHOST_SESSION_STORE=redis.url,
        AGENTHOST_RUN_LEASE_SECONDS=str(LEASE),
        DURABLE_COUNTER=str(counter),
    ) as started:
        yield started, counter


def test_a_task_resumes_on_the_other_replica_without_running_its_tool_again(
    pair: tuple[list[Replica], Path],
) -> None:
    (owner, other), counter = pair
    counter.unlink(missing_ok=True)
    created = rpc(owner, "tools/call", "counting", name="counting", arguments={"message": "go"})
    assert created["resultType"] == "task", created
    task_id = created["taskId"]
    deadline = time.monotonic() + 10
    while not counter.exists():
        assert time.monotonic() < deadline, "the tool never ran"
        time.sleep(0.02)
    time.sleep(0.6)  # a few words of the answer streamed: the step in flight is lost
    assert get(other, task_id)["status"] == "working"
    owner.kill()
    killed = time.monotonic()
    try:
        while (task := get(other, task_id))["status"] == "working":
            assert time.monotonic() < killed + 30, task
            time.sleep(0.1)
        done_after = time.monotonic() - killed
    finally:
        owner.start()
    assert task["status"] == "completed", task  # never failed on the way
    assert [part["text"] for part in task["result"]["content"]] == [ANSWER]
    assert not task["result"].get("isError")
    assert counter.read_text() == "1"  # the recorded tool result was not made again
    # The whole answer: the step before the kill and the resumed one (3 s of words),
    # after the lease ran out and a claim round found it.
    assert done_after < LEASE + LEASE / 3 + 3 + 5, done_after
    assert get(owner, task_id)["result"] == task["result"]  # restarted: reads it too
    print(f"kill -> completed on the other replica: {done_after:.2f} s")


def _under_way(replica: Replica, counter: Path, agent: str) -> str:
    counter.unlink(missing_ok=True)
    created = rpc(replica, "tools/call", agent, name=agent, arguments={"message": "go"})
    deadline = time.monotonic() + 10
    while not counter.exists():
        assert time.monotonic() < deadline, "the tool never ran"
        time.sleep(0.02)
    time.sleep(0.6)
    task_id: str = created["taskId"]
    return task_id


def _ended(replica: Replica, task_id: str, since: float) -> tuple[dict, float]:
    while (task := get(replica, task_id))["status"] == "working":
        assert time.monotonic() < since + 30, task
        time.sleep(0.1)
    return task, time.monotonic() - since


def test_an_agent_that_is_not_durable_fails_its_orphaned_task(
    pair: tuple[list[Replica], Path],
) -> None:
    (owner, other), counter = pair
    task_id = _under_way(owner, counter, "fragile")
    owner.kill()
    try:
        task, took = _ended(other, task_id, time.monotonic())
    finally:
        owner.start()
    assert task["status"] == "failed", task
    assert "start the run again" in task["error"]["message"], task
    assert took < LEASE + LEASE / 3 + 3, took
    print(f"not durable: kill -> failed {took:.2f} s")


def test_a_replica_stopped_by_sigterm_hands_its_task_over(
    pair: tuple[list[Replica], Path],
) -> None:
    (owner, other), counter = pair
    task_id = _under_way(owner, counter, "counting")
    stopped = time.monotonic()
    owner.terminate()
    try:
        task, took = _ended(other, task_id, stopped)
    finally:
        owner.start()
    assert task["status"] == "completed", task
    assert [part["text"] for part in task["result"]["content"]] == [ANSWER]
    assert counter.read_text() == "1"
    print(f"sigterm: stop -> completed {took:.2f} s")
