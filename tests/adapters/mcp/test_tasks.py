"""MCP tasks (2026-07-28 extension) with the Python SDK's client: polled, cancelled, gated."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

import anyio
import anyio.lowlevel
import mcp_types as types
import pytest
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict, Field, TypeAdapter

from agenthost.adapters.mcp.tasks import EXTENSION, META_CAPABILITIES, TaskStore
from agenthost.agents import (
    BaseAgent,
    Message,
    RunFinished,
    RunOptions,
    RunResult,
    RunUpdate,
    TextPart,
)
from tests.principals import KEYS, bearer

from .helpers import URL, http, mcp_client, mcp_settings, running_app

pytestmark = pytest.mark.anyio


class Slow(BaseAgent):
    """Answers after ``release`` is set; records whether its run was cancelled."""

    def __init__(self, name: str) -> None:
        super().__init__(name, "Answers when released.")
        self.release = anyio.Event()
        self.started = anyio.Event()
        self.cancelled = anyio.Event()

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        self.started.set()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.cancelled.set()
            raise
        reply = Message(role="assistant", parts=[TextPart(text="done at last")])
        yield RunFinished(RunResult("done at last", [*input, reply]))


class CreatedTask(types.Result):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field("task", alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str


ANY = TypeAdapter(dict[str, Any])


class TaskRequestParams(types.RequestParams):
    task_id: str


def request(method: str, task_id: str | None = None) -> types.Request[Any, Any]:
    # A typed params model: the client sends a plain Request's params as bare RequestParams.
    params = TaskRequestParams(task_id=task_id) if task_id else types.RequestParams()
    return types.Request(method=method, params=params)


class Tasks(ClientExtension):
    """A client side of the extension: polls a created task, or cancels it first."""

    identifier = EXTENSION

    def __init__(self, cancel: bool = False) -> None:
        self.cancel = cancel
        self.seen: list[dict[str, Any]] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        self.seen.append(created.model_dump(by_alias=True))
        if self.cancel:
            await ctx.session.send_request(request("tasks/cancel", created.task_id), ANY)
        with anyio.fail_after(30):
            while True:
                task = await ctx.session.send_request(request("tasks/get", created.task_id), ANY)
                self.seen.append(task)
                if task["status"] in ("completed", "failed", "cancelled"):
                    break
                await anyio.sleep(0.02)
        if task["status"] != "completed":
            return types.CallToolResult(
                content=[types.TextContent(text=task["status"])], is_error=True
            )
        return types.CallToolResult.model_validate(task["result"])


async def test_a_task_is_polled_to_completion() -> None:
    slow = Slow("slow")
    async with running_app({"slow": slow}) as app:
        tasks = Tasks()
        async with mcp_client(app, extensions=[tasks]) as client:
            async with anyio.create_task_group() as group:

                async def release() -> None:
                    await slow.started.wait()
                    await anyio.sleep(0.2)  # the client polls a working task meanwhile
                    slow.release.set()

                group.start_soon(release)
                result = await client.call_tool("slow", {"message": "go"})
            # SEP-2663 removed tasks/list (and tasks/result).
            with pytest.raises(MCPError) as removed:
                await client.session.send_request(request("tasks/list"), ANY)
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "done at last"
    created = tasks.seen[0]
    assert created["resultType"] == "task" and created["status"] == "working"
    assert {"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= created.keys()
    assert [t["status"] for t in tasks.seen[1:]][-1] == "completed"
    assert "working" in [t["status"] for t in tasks.seen[1:]]
    assert {t["resultType"] for t in tasks.seen[1:]} == {"complete"}  # tasks/get (SEP-2663)
    assert removed.value.error.code == types.METHOD_NOT_FOUND


async def test_a_cancelled_task_stops_its_run() -> None:
    slow = Slow("slow")
    async with running_app({"slow": slow}) as app:
        tasks = Tasks(cancel=True)
        async with mcp_client(app, extensions=[tasks]) as client:
            result = await client.call_tool("slow", {"message": "go"})
            with anyio.fail_after(30):
                await slow.cancelled.wait()
            task_id = tasks.seen[0]["taskId"]
            # Cancelling a terminal task is the same empty acknowledgement.
            ack = await client.session.send_request(request("tasks/cancel", task_id), ANY)
    assert result.is_error and tasks.seen[-1]["status"] == "cancelled"
    assert "result" not in tasks.seen[-1]
    assert ack["resultType"] == "complete"
    assert not {"taskId", "status", "result", "error"} & ack.keys()


async def test_without_the_extension_calls_are_plain_and_tasks_refused() -> None:
    slow = Slow("slow")
    slow.release.set()
    async with running_app({"slow": slow}) as app, mcp_client(app) as client:
        assert EXTENSION in (client.server_capabilities.extensions or {})
        result = await client.call_tool("slow", {"message": "go"})
        refused = []
        for method in ("tasks/get", "tasks/cancel", "tasks/update"):
            with pytest.raises(MCPError) as error:
                await client.session.send_request(request(method, "x"), ANY)
            refused.append(error.value.error.code)
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "done at last"
    assert refused == [-32021, -32021, -32021]


async def test_another_keys_task_is_unknown_over_http() -> None:
    slow = Slow("slow")
    settings = mcp_settings(api_keys=[f"{n}:{k}" for n, k in KEYS.items()])
    async with running_app({"slow": slow}, settings) as app:
        tasks = Tasks(cancel=False)

        async def created_only(created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
            tasks.seen.append(created.model_dump(by_alias=True))
            # Not polled here: the test reads the task as both keys.
            return types.CallToolResult(content=[types.TextContent(text="created")], is_error=True)

        tasks.resolve = created_only  # type: ignore[method-assign]
        async with (
            mcp_client(app, bearer("alice"), extensions=[tasks]) as alice,
            mcp_client(app, bearer("bob"), extensions=[Tasks()]) as bob,
        ):
            await alice.call_tool("slow", {"message": "go"})
            task_id = tasks.seen[0]["taskId"]
            codes = []
            for method in ("tasks/get", "tasks/cancel"):
                with pytest.raises(MCPError) as error:
                    await bob.session.send_request(request(method, task_id), ANY)
                codes.append(error.value.error.code)
            mine = await alice.session.send_request(request("tasks/get", task_id), ANY)
            await alice.session.send_request(request("tasks/cancel", task_id), ANY)
    assert codes == [types.INVALID_PARAMS, types.INVALID_PARAMS]
    assert mine["status"] == "working"  # bob's cancel did nothing


async def test_one_request_opts_in_by_its_own_meta() -> None:
    slow = Slow("slow")
    slow.release.set()
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "slow",
    }
    kinds = []
    async with running_app({"slow": slow}) as app, http(app) as client:
        for extensions in ({EXTENSION: {}}, {}):
            meta = {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                META_CAPABILITIES: {"extensions": extensions},
            }
            params = {"name": "slow", "arguments": {"message": "hi"}, "_meta": meta}
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            response = await client.post(URL, json=body, headers=headers)
            kinds.append(response.json()["result"]["resultType"])
    assert kinds == ["task", "complete"]


async def test_another_principals_task_is_unknown() -> None:
    store = TaskStore(max_tasks=2)

    async def answer() -> dict[str, Any]:
        return {"content": []}

    created = store.start("alice", answer)
    assert created is not None
    with pytest.raises(MCPError) as unknown:
        store.get("bob", created["taskId"])
    assert unknown.value.error.code == types.INVALID_PARAMS
    with anyio.fail_after(10):
        while (status := store.get("alice", created["taskId"])["status"]) == "working":
            await anyio.lowlevel.checkpoint()
    assert status == "completed"


async def test_the_table_is_bounded() -> None:
    store = TaskStore(max_tasks=2)
    never = anyio.Event()

    async def forever() -> dict[str, Any]:
        await never.wait()
        return {}

    first, second = store.start("alice", forever), store.start("alice", forever)
    assert first is not None and second is not None
    assert store.start("alice", forever) is None  # all running: the call runs synchronously
    store.cancel("alice", first["taskId"])
    third = store.start("alice", forever)  # the finished one makes room
    assert third is not None
    with pytest.raises(MCPError):
        store.get("alice", first["taskId"])  # dropped
    for task in (second, third):
        assert store.get("alice", task["taskId"])["status"] == "working"
    await store.close()  # shutdown: the running ones are cancelled
    assert {store.get("alice", t["taskId"])["status"] for t in (second, third)} == {"cancelled"}
