"""MCP tasks across two real replicas over one real Redis: any replica answers for a task.

Raw JSON-RPC of the 2026-07-28 era (the Python SDK's client keeps one
connection to one URL; these requests hop replicas on purpose). A task
started on replica 0 is read, answered and cancelled on replica 1: the
cancel reaches the run on replica 0 (its agent leaves a file when cancelled).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.scale.test_replicas import Replica, replicas
from tests.stores import RedisServer, redis  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow

TASKS = "io.modelcontextprotocol/tasks"
VERSION = "2026-07-28"


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory,
    redis: RedisServer,  # noqa: F811
) -> Iterator[tuple[list[Replica], Path]]:
    folder = tmp_path_factory.mktemp("mcp-task-replicas")
    cancelled = folder / "cancelled"
    cancelled.mkdir()
    with replicas(
        folder,
        2,
        AGENTHOST_ADAPTERS="mcp",
        AGENTHOST_SESSION_STORE=redis.url,
        RECALL_CANCELLED=str(cancelled),
    ) as started:
        yield started, cancelled


def rpc(replica: Replica, method: str, routed: str, **params: Any) -> dict[str, Any]:
    """One request to ``replica``, from a client that declares tasks and elicitation."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {TASKS: {}},
        },
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
        "Mcp-Name": routed,  # the tool, or the task (SEP-2663's routing header)
    }
    response = httpx.post(f"{replica.url}/mcp", json=body, headers=headers, timeout=60)
    reply: dict[str, Any] = response.json()
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def start(replica: Replica, message: str) -> str:
    created = rpc(replica, "tools/call", "recall", name="recall", arguments={"message": message})
    assert created["resultType"] == "task", created
    task_id: str = created["taskId"]
    return task_id


def get(replica: Replica, task_id: str) -> dict[str, Any]:
    return rpc(replica, "tasks/get", task_id, taskId=task_id)


def until(replica: Replica, task_id: str, *statuses: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while (task := get(replica, task_id))["status"] not in statuses:
        assert time.monotonic() < deadline, task
        time.sleep(0.05)
    return task


def test_a_task_started_on_one_replica_completes_on_the_other(
    pair: tuple[list[Replica], Path],
) -> None:
    (first, second), _ = pair
    task_id = start(first, "hello there")
    done = until(second, task_id, "completed", "failed", "cancelled")
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "hello there"
    assert get(first, task_id)["result"] == done["result"]


def test_a_task_waiting_for_input_is_answered_on_the_other_replica(
    pair: tuple[list[Replica], Path],
) -> None:
    (first, second), _ = pair
    task_id = start(first, "ask me")
    waiting = until(second, task_id, "input_required", "completed", "failed")
    assert waiting["status"] == "input_required"
    ((key, asked),) = waiting["inputRequests"].items()
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["message"] == "What is your name?"
    answer = {"action": "accept", "content": {"answer": "Ada"}}
    ack = rpc(second, "tasks/update", task_id, taskId=task_id, inputResponses={key: answer})
    assert ack["resultType"] == "complete"
    done = until(first, task_id, "completed", "failed", "cancelled")
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"] == "Nice to meet you, Ada."


def test_a_cancel_on_the_other_replica_stops_the_run(
    pair: tuple[list[Replica], Path],
) -> None:
    (first, second), cancelled = pair
    task_id = start(first, "slow mcp-task")
    assert get(second, task_id)["status"] == "working"
    ack = rpc(second, "tasks/cancel", task_id, taskId=task_id)
    assert ack["resultType"] == "complete"
    assert get(first, task_id)["status"] == "cancelled"
    deadline = time.monotonic() + 30
    while not (cancelled / "mcp-task").exists():  # the run on the first replica stopped
        assert time.monotonic() < deadline, "the run on the other replica was not cancelled"
        time.sleep(0.05)
    assert get(second, task_id)["status"] == "cancelled"
