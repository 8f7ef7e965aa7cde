"""MCP tasks (2026-07-28 extension) with the Python SDK's client: polled, cancelled, gated,
waiting for input and resumed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
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
    ASK_USER,
    BaseAgent,
    ChatAgent,
    Message,
    RunFinished,
    RunOptions,
    RunResult,
    RunUpdate,
    TextPart,
)
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.base import BaseChatModel, ModelResponse
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.testing import Reply, call
from tests.principals import KEYS, PAIRS, bearer
from tests.upstream import FakeUpstream

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


class UpdateParams(TaskRequestParams):
    input_responses: dict[str, Any]


def request(method: str, task_id: str | None = None) -> types.Request[Any, Any]:
    # A typed params model: the client sends a plain Request's params as bare RequestParams.
    params = TaskRequestParams(task_id=task_id) if task_id else types.RequestParams()
    return types.Request(method=method, params=params)


class Tasks(ClientExtension):
    """A client side of the extension: polls a created task, or cancels it first."""

    identifier = EXTENSION

    def __init__(
        self,
        cancel: bool = False,
        answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        before_cancel: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.cancel = cancel
        self.answer = answer
        self.before_cancel = before_cancel
        self.seen: list[dict[str, Any]] = []
        self.acks: list[dict[str, Any]] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        self.seen.append(created.model_dump(by_alias=True))
        if self.cancel:
            if self.before_cancel is not None:
                await self.before_cancel()
            await ctx.session.send_request(request("tasks/cancel", created.task_id), ANY)
        with anyio.fail_after(30):
            while True:
                task = await ctx.session.send_request(request("tasks/get", created.task_id), ANY)
                self.seen.append(task)
                if task["status"] in ("completed", "failed", "cancelled"):
                    break
                if task["status"] == "input_required" and self.answer is not None:
                    responses = {k: self.answer(r) for k, r in task["inputRequests"].items()}
                    update = UpdateParams(task_id=created.task_id, input_responses=responses)
                    self.acks.append(
                        await ctx.session.send_request(
                            types.Request(method="tasks/update", params=update), ANY
                        )
                    )
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


@pytest.mark.parametrize(("owner", "other"), PAIRS)  # two keys; one name in two tenants
async def test_another_keys_task_is_unknown_over_http(owner: str, other: str) -> None:
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
            mcp_client(app, bearer(owner), extensions=[tasks]) as alice,
            mcp_client(app, bearer(other), extensions=[Tasks()]) as bob,
        ):
            await alice.call_tool("slow", {"message": "go"})
            task_id = tasks.seen[0]["taskId"]
            codes = []
            update = types.Request(
                method="tasks/update", params=UpdateParams(task_id=task_id, input_responses={})
            )
            for sent in (request("tasks/get", task_id), request("tasks/cancel", task_id), update):
                with pytest.raises(MCPError) as error:
                    await bob.session.send_request(sent, ANY)
                codes.append(error.value.error.code)
            mine = await alice.session.send_request(request("tasks/get", task_id), ANY)
            await alice.session.send_request(request("tasks/cancel", task_id), ANY)
    assert codes == [types.INVALID_PARAMS] * 3
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

    created = await store.start("alice", {"name": "x"}, answer)
    assert created["resultType"] == "task"
    with pytest.raises(MCPError) as unknown:
        await store.get("bob", created["taskId"])
    assert unknown.value.error.code == types.INVALID_PARAMS
    for task_id in (created["taskId"], "no-such-task"):
        with pytest.raises(MCPError) as unknown:
            await store.update("bob", task_id, {"1.x": {"action": "accept"}}, lambda _: None)
        assert unknown.value.error.message == f"Unknown task: {task_id}"
    with anyio.fail_after(10):
        while (status := (await store.get("alice", created["taskId"]))["status"]) == "working":
            await anyio.lowlevel.checkpoint()
    assert status == "completed"


async def test_the_table_is_bounded() -> None:
    store = TaskStore(max_tasks=2)
    never = anyio.Event()
    inline = {"content": [], "resultType": "complete"}

    async def forever() -> dict[str, Any]:
        await never.wait()
        return {}

    async def at_once() -> dict[str, Any]:
        return inline

    first = await store.start("alice", {}, forever)
    second = await store.start("alice", {}, forever)
    assert first["resultType"] == second["resultType"] == "task"
    # All running: the call runs in its request (no task).
    assert await store.start("alice", {}, at_once) == inline
    await store.cancel("alice", first["taskId"])
    third = await store.start("alice", {}, forever)  # the finished one makes room
    assert third["resultType"] == "task"
    with pytest.raises(MCPError):
        await store.get("alice", first["taskId"])  # dropped
    for task in (second, third):
        assert (await store.get("alice", task["taskId"]))["status"] == "working"
    await store.close()  # shutdown: the running ones are cancelled
    statuses = {(await store.get("alice", t["taskId"]))["status"] for t in (second, third)}
    assert statuses == {"cancelled"}


async def test_a_run_that_ends_within_task_after_is_answered_in_the_call() -> None:
    store = TaskStore()
    quick = {"content": [], "resultType": "complete"}

    async def at_once() -> dict[str, Any]:
        return quick

    async def slowly() -> dict[str, Any]:
        await anyio.sleep(5)
        return quick

    assert await store.start("alice", {}, at_once, after=5.0) == quick
    created = await store.start("alice", {}, slowly, after=0.05)
    assert created["resultType"] == "task"
    await store.close()


# A task whose agent asks its user: input_required, answered by tasks/update.


async def until(condition: Callable[[], bool]) -> None:
    """Wait up to 30 s for ``condition`` (the fake upstream runs in another thread: polled)."""
    for _ in range(1500):
        if condition():
            return
        await anyio.sleep(0.02)
    raise AssertionError("the condition never held")


async def _asker(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"Nice to meet you, {getattr(last.parts[0], 'content', '')}."
    return call("ask_user", '{"question": "What is your name?"}')


async def _elicit(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("a task asks by its status, never inside the call")


async def test_a_task_waits_for_input_and_goes_on_with_the_answer() -> None:
    asker = ChatAgent("asker", FunctionModel(_asker), tools=(ASK_USER,))
    tasks = Tasks(answer=lambda request: {"action": "accept", "content": {"answer": "Ada"}})
    async with (
        running_app({"asker": asker}) as app,
        mcp_client(app, extensions=[tasks], elicitation_callback=_elicit) as client,
    ):
        result = await client.call_tool("asker", {"message": "hello"})
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "Nice to meet you, Ada."
    waiting = [t for t in tasks.seen if t["status"] == "input_required"]
    assert waiting, [t["status"] for t in tasks.seen]
    (asked,) = waiting[0]["inputRequests"].values()
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["message"] == "What is your name?"
    assert "requestState" not in waiting[0]
    assert [ack["resultType"] for ack in tasks.acks] == ["complete"]
    assert not {"taskId", "status", "result"} & tasks.acks[0].keys()
    assert tasks.seen[-1]["status"] == "completed"


class StreamingOpenAI(OpenAIModel):
    """Streams from the upstream even for an unstreamed run (a task's): a stream to close."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        return await BaseChatModel.request(self, request)


async def test_a_cancelled_task_closes_the_upstream_stream(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, url = upstream
    relay = ChatAgent("relay", StreamingOpenAI("slow", base_url=url, max_retries=0))
    before = fake.abandoned
    started = fake.slow_started

    async def once_streaming() -> None:
        await until(lambda: fake.slow_started > started)

    tasks = Tasks(cancel=True, before_cancel=once_streaming)
    async with running_app({"relay": relay}) as app, mcp_client(app, extensions=[tasks]) as client:
        result = await client.call_tool("relay", {"message": "go"})
        await until(lambda: fake.abandoned > before)
    assert result.is_error and tasks.seen[-1]["status"] == "cancelled"


async def test_a_tasks_request_naming_another_task_is_refused() -> None:
    slow = Slow("slow")
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
    }
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        META_CAPABILITIES: {"extensions": {EXTENSION: {}}},
    }

    def body(method: str, **params: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}

    async with running_app({"slow": slow}) as app, http(app) as client:
        created = await client.post(
            URL,
            json=body("tools/call", name="slow", arguments={"message": "hi"}),
            headers={**headers, "Mcp-Method": "tools/call", "Mcp-Name": "slow"},
        )
        task_id = created.json()["result"]["taskId"]
        answers = []
        for name in (task_id, "another-task"):
            answers.append(
                await client.post(
                    URL,
                    json=body("tasks/get", taskId=task_id),
                    headers={**headers, "Mcp-Method": "tasks/get", "Mcp-Name": name},
                )
            )
        slow.release.set()
    assert answers[0].status_code == 200 and answers[0].json()["result"]["taskId"] == task_id
    assert answers[1].status_code == 400
    assert answers[1].json()["error"]["code"] == -32020
