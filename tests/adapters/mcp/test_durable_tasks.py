"""MCP tasks as durable runs, in one process: the run's log, and the outcome the
replica that ends a run writes (replicas and kills: tests/scale/test_durable_mcp.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agenthost.adapters.base import AdapterContext
from agenthost.adapters.durable import DurableRuns, LocalRunLog, RunRecord
from agenthost.adapters.mcp.task_runs import TaskRuns
from agenthost.adapters.mcp.tasks import (
    EXTENSION,
    META_CAPABILITIES,
    PROTOCOL,
    TaskRecord,
    TaskStore,
    run_id,
)
from agenthost.agents import ASK_USER, ChatAgent, tool
from agenthost.agents.errors import ModelError, RunInterrupted
from agenthost.agents.models.base import ModelRequest
from agenthost.agents.models.testing import FunctionModel, Reply, call
from agenthost.app.memory import LRUMemoryManager

from .helpers import URL, http, mcp_client, mcp_settings, running_app
from .test_tasks import Tasks

pytestmark = pytest.mark.anyio

VERSION = "2026-07-28"

counted: list[int] = []


@tool
def count() -> str:
    """Count one more."""
    counted.append(1)
    return str(len(counted))


async def _counting(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return "Done."
    return ["Counting.", call("count")]


async def test_a_task_with_a_tool_step_completes_with_the_whole_answer_once() -> None:
    counted.clear()
    agent = ChatAgent("counting", FunctionModel(_counting), tools=(count,))
    async with running_app({"counting": agent}) as app:
        tasks = Tasks()
        async with mcp_client(app, extensions=[tasks]) as client:
            result = await client.call_tool("counting", {"message": "go"})
    assert result.content[0].text == "Counting.\n\nDone."  # type: ignore[union-attr]
    assert counted == [1]
    assert tasks.seen[0]["resultType"] == "task"


def _store() -> tuple[TaskStore, TaskRuns]:
    runs = DurableRuns(LocalRunLog())
    store = TaskStore(runs=runs)
    return store, TaskRuns(
        AdapterContext(agents={}, memory=LRUMemoryManager("mcp", max_sessions=10, ttl=60)),
        {},
        store,
    )


async def _task(store: TaskStore) -> RunRecord:
    record = TaskRecord("t1", "alice", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")
    await store.records.create(record)
    request = {"task": "t1", "call": {"name": "counting", "arguments": {}}}
    return RunRecord(run_id("t1", 0), PROTOCOL, "counting", "alice", request)


async def test_an_orphaned_run_that_is_not_resumed_fails_its_task_saying_why() -> None:
    store, kind = _store()
    run = await _task(store)
    reason = "the replica running this run stopped before it finished; start the run again"
    await kind.settled(run, None, RunInterrupted(reason))
    task = await store.get("alice", "t1")
    assert task["status"] == "failed"
    assert task["error"] == {"code": -32603, "message": reason}


async def test_an_agent_failure_completes_its_task_with_an_error_result() -> None:
    store, kind = _store()
    run = await _task(store)
    await kind.settled(run, None, ModelError("the model is down"))
    task = await store.get("alice", "t1")
    assert task["status"] == "completed"
    assert task["result"]["isError"] is True


async def test_a_run_that_ends_within_task_after_is_answered_in_the_call(tmp_path: Path) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - name: quick\n    model: echo\n    mcp: {task_after: 10}\n")
    settings = mcp_settings(config=config, adapters=["mcp"])
    async with running_app(None, settings) as app:  # type: ignore[arg-type]
        tasks = Tasks()
        async with mcp_client(app, extensions=[tasks]) as client:
            quick = await client.call_tool("quick", {"message": "hello"})
    assert quick.content[0].text == "hello"  # type: ignore[union-attr]
    assert tasks.seen == []  # no task: the answer came within task_after


async def _asker(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"Nice to meet you, {getattr(last.parts[0], 'content', '')}."
    return call("ask_user", '{"question": "What is your name?"}')


async def test_a_retried_call_with_its_answers_runs_on_as_a_task() -> None:
    """The answers a 2026-07-28 retry brings are part of the task's call (its durable run
    is rebuilt from the record, not from the request)."""
    asker = ChatAgent("asker", FunctionModel(_asker), tools=(ASK_USER,))
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": VERSION}

    def body(method: str, extensions: dict[str, Any], **params: Any) -> dict[str, Any]:
        meta = {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            META_CAPABILITIES: {"elicitation": {}, "extensions": extensions},
        }
        return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}

    async def rpc(method: str, routed: str, tasks: bool, **params: Any) -> dict[str, Any]:
        sent = body(method, {EXTENSION: {}} if tasks else {}, **params)
        routing = {"Mcp-Method": method, "Mcp-Name": routed}
        answer = await client.post(URL, json=sent, headers={**headers, **routing})
        result: dict[str, Any] = answer.json()["result"]
        return result

    async with running_app({"asker": asker}) as app, http(app) as client:
        asked = await rpc("tools/call", "asker", False, name="asker", arguments={})
        assert asked["resultType"] == "input_required", asked
        (key,) = asked["inputRequests"]
        answers = {key: {"action": "accept", "content": {"answer": "Ada"}}}
        created = await rpc(
            "tools/call",
            "asker",
            True,
            name="asker",
            arguments={},
            inputResponses=answers,
            requestState=asked["requestState"],
        )
        assert created["resultType"] == "task", created
        task_id = created["taskId"]
        with anyio.fail_after(10):
            while True:  # polled, as a client of tasks does
                task = await rpc("tasks/get", task_id, True, taskId=task_id)
                if task["status"] != "working":
                    break
                await anyio.sleep(0.02)
    assert task["status"] == "completed", task
    assert task["result"]["content"][0]["text"] == "Nice to meet you, Ada."
