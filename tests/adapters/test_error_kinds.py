"""Every adapter maps every kind of failure to its protocol's nearest equivalent.

One agent per :class:`ErrorKind` fails with an error of that kind; each
protocol is driven through its real path (its official client where the
test suite has one, in-process) and what the client sees is compared with
the protocol's expected shape, for all kinds at once.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a.types import TaskState
from acp import RequestError, text_block
from acp_sdk.models import RunStatus
from asgi_lifespan import LifespanManager
from mcp_types import TextContent

from agenthost.adapters.a2a.errors import ERRORS as A2A_ERRORS
from agenthost.adapters.acp.errors import ERRORS as ACP_ERRORS
from agenthost.adapters.acp_zed.agent import ZedAgent
from agenthost.adapters.acp_zed.errors import ERRORS as ZED_ERRORS
from agenthost.adapters.ag_ui.errors import ERRORS as AG_UI_ERRORS
from agenthost.adapters.ai_sdk.errors import ERRORS as AI_SDK_ERRORS
from agenthost.adapters.anthropic.errors import ERRORS as ANTHROPIC_ERRORS
from agenthost.adapters.mcp.errors import ERRORS as MCP_ERRORS
from agenthost.adapters.mcp.errors import META_KEY
from agenthost.adapters.openai.errors import ERRORS as OPENAI_ERRORS
from agenthost.adapters.orchestrate.errors import ERRORS as ORCHESTRATE_ERRORS
from agenthost.agents import (
    Agent,
    AgentError,
    ErrorKind,
    FunctionAgent,
    Message,
    ModelBusy,
    ModelError,
    NotFound,
    RunCancelled,
    RunInterrupted,
    RunLimitExceeded,
    RunRefused,
    UserError,
)
from agenthost.agents.errors import StoreUnavailable
from agenthost.app.memory import LRUMemoryManager
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.a2a.support import a2a_settings, collect, final_task, sdk_client, user_message
from tests.adapters.acp.clients import acp_client
from tests.adapters.ag_ui.clients import ag_ui_client, run, run_input, user
from tests.adapters.mcp.helpers import mcp_client, running_app

pytestmark = pytest.mark.anyio

FAILURES: dict[ErrorKind, AgentError] = {
    ErrorKind.BUSY: ModelBusy("rate limited", retry_after=3),
    ErrorKind.TIMEOUT: RunLimitExceeded("took too long", code="run_timeout"),
    ErrorKind.REFUSED: RunRefused("I do not do taxes"),
    ErrorKind.LIMIT_EXCEEDED: RunLimitExceeded("too long", code="output_limit_exceeded"),
    ErrorKind.BAD_INPUT: UserError("no images here", param="input"),
    ErrorKind.NOT_FOUND: NotFound("no such document"),
    ErrorKind.UPSTREAM: ModelError("the upstream exploded"),
    ErrorKind.CANCELLED: RunCancelled("the user stopped it"),
    ErrorKind.INTERRUPTED: RunInterrupted("the server is stopping"),
    ErrorKind.INTERNAL: AgentError("the agent broke"),
    ErrorKind.UNAVAILABLE: StoreUnavailable("redis is down"),
}


def failing(kind: ErrorKind) -> Agent:
    async def fail(messages: list[Message]) -> str:
        raise FAILURES[kind]

    return FunctionAgent(kind.value, fail)


AGENTS = {kind.value: failing(kind) for kind in ErrorKind}

TABLES: dict[str, dict[ErrorKind, Any]] = {
    "openai": dict(OPENAI_ERRORS),
    "a2a": dict(A2A_ERRORS),
    "mcp": dict(MCP_ERRORS),
    "acp": dict(ACP_ERRORS),
    "acp_zed": dict(ZED_ERRORS),
    "ag_ui": dict(AG_UI_ERRORS),
    "ai_sdk": dict(AI_SDK_ERRORS),
    "anthropic": dict(ANTHROPIC_ERRORS),
    "orchestrate": dict(ORCHESTRATE_ERRORS),
}


@pytest.mark.parametrize("adapter", TABLES)
def test_every_adapter_has_an_entry_for_every_kind(adapter: str) -> None:
    assert set(TABLES[adapter]) == set(ErrorKind)


def test_every_kind_has_a_failure_here() -> None:
    assert {error.kind for error in FAILURES.values()} == set(ErrorKind)


OPENAI = {
    ErrorKind.BUSY: (429, "rate_limit_exceeded", "3", None),
    ErrorKind.TIMEOUT: (504, "run_timeout", None, "false"),
    ErrorKind.REFUSED: (403, "refused", None, None),
    ErrorKind.LIMIT_EXCEEDED: (400, "output_limit_exceeded", None, None),
    ErrorKind.BAD_INPUT: (400, "invalid_request", None, None),
    ErrorKind.NOT_FOUND: (404, "not_found", None, None),
    ErrorKind.UPSTREAM: (502, "upstream_error", None, "false"),
    ErrorKind.CANCELLED: (499, "client_closed_request", None, None),
    ErrorKind.INTERRUPTED: (503, "server_shutting_down", None, None),
    ErrorKind.INTERNAL: (500, "agent_error", None, "false"),
    ErrorKind.UNAVAILABLE: (503, "store_unavailable", None, None),
}
"""status, error code, retry-after, x-should-retry."""

ANTHROPIC = {
    ErrorKind.BUSY: (529, "overloaded_error", "3", None),
    ErrorKind.TIMEOUT: (504, "timeout_error", None, "false"),
    ErrorKind.REFUSED: (403, "permission_error", None, None),
    ErrorKind.LIMIT_EXCEEDED: (400, "invalid_request_error", None, None),
    ErrorKind.BAD_INPUT: (400, "invalid_request_error", None, None),
    ErrorKind.NOT_FOUND: (404, "not_found_error", None, None),
    ErrorKind.UPSTREAM: (502, "api_error", None, "false"),
    ErrorKind.CANCELLED: (499, "invalid_request_error", None, None),
    ErrorKind.INTERRUPTED: (503, "overloaded_error", None, None),
    ErrorKind.INTERNAL: (500, "api_error", None, "false"),
    ErrorKind.UNAVAILABLE: (503, "overloaded_error", None, None),
}
"""status, ``error.type``, retry-after, x-should-retry."""

ORCHESTRATE = {
    ErrorKind.BUSY: (429, "busy", True, "3"),
    ErrorKind.TIMEOUT: (504, "timeout", False, None),
    ErrorKind.REFUSED: (403, "refused", False, None),
    ErrorKind.LIMIT_EXCEEDED: (400, "limit_exceeded", False, None),
    ErrorKind.BAD_INPUT: (400, "bad_input", False, None),
    ErrorKind.NOT_FOUND: (404, "not_found", False, None),
    ErrorKind.UPSTREAM: (502, "upstream", False, None),
    ErrorKind.CANCELLED: (499, "cancelled", False, None),
    ErrorKind.INTERRUPTED: (503, "interrupted", True, None),
    ErrorKind.INTERNAL: (500, "internal", False, None),
    ErrorKind.UNAVAILABLE: (503, "unavailable", True, None),
}
"""A non-streamed turn: status, ``error.code``, ``error.retryable``, retry-after."""

A2A = {
    ErrorKind.BUSY: (TaskState.TASK_STATE_FAILED, True),
    ErrorKind.TIMEOUT: (TaskState.TASK_STATE_FAILED, False),
    ErrorKind.REFUSED: (TaskState.TASK_STATE_REJECTED, False),
    ErrorKind.LIMIT_EXCEEDED: (TaskState.TASK_STATE_FAILED, False),
    ErrorKind.BAD_INPUT: (TaskState.TASK_STATE_REJECTED, False),
    ErrorKind.NOT_FOUND: (TaskState.TASK_STATE_REJECTED, False),
    ErrorKind.UPSTREAM: (TaskState.TASK_STATE_FAILED, False),
    ErrorKind.CANCELLED: (TaskState.TASK_STATE_CANCELED, False),
    ErrorKind.INTERRUPTED: (TaskState.TASK_STATE_FAILED, True),
    ErrorKind.INTERNAL: (TaskState.TASK_STATE_FAILED, False),
    ErrorKind.UNAVAILABLE: (TaskState.TASK_STATE_FAILED, True),
}
"""The task's final state, and whether its message says retrying can help."""

MCP = {
    ErrorKind.BUSY: "the agent's model is busy (retry after 3 s), try again later: rate limited",
    ErrorKind.TIMEOUT: "the run timed out: took too long",
    ErrorKind.REFUSED: "the agent refused: I do not do taxes",
    ErrorKind.LIMIT_EXCEEDED: "the run went over a limit: too long",
    ErrorKind.BAD_INPUT: "the agent cannot do this: no images here",
    ErrorKind.NOT_FOUND: "not found: no such document",
    ErrorKind.UPSTREAM: "the agent's model failed: the upstream exploded",
    ErrorKind.CANCELLED: "the run was cancelled: the user stopped it",
    ErrorKind.INTERRUPTED: "the server is shutting down, try again: the server is stopping",
    ErrorKind.INTERNAL: "the agent failed: the agent broke",
    ErrorKind.UNAVAILABLE: "a store is unavailable, try again: redis is down",
}
"""The text of the ``isError`` result."""

ACP = {
    ErrorKind.BUSY: (RunStatus.FAILED, "server_error", True),
    ErrorKind.TIMEOUT: (RunStatus.FAILED, "server_error", False),
    ErrorKind.REFUSED: (RunStatus.FAILED, "invalid_input", False),
    ErrorKind.LIMIT_EXCEEDED: (RunStatus.FAILED, "invalid_input", False),
    ErrorKind.BAD_INPUT: (RunStatus.FAILED, "invalid_input", False),
    ErrorKind.NOT_FOUND: (RunStatus.FAILED, "not_found", False),
    ErrorKind.UPSTREAM: (RunStatus.FAILED, "server_error", False),
    ErrorKind.CANCELLED: (RunStatus.CANCELLED, None, None),
    ErrorKind.INTERRUPTED: (RunStatus.FAILED, "server_error", True),
    ErrorKind.INTERNAL: (RunStatus.FAILED, "server_error", False),
    ErrorKind.UNAVAILABLE: (RunStatus.FAILED, "server_error", True),
}
"""The run's status, its error's code, and the error data's ``retryable``."""

ZED = {
    ErrorKind.BUSY: (-32603, True),
    ErrorKind.TIMEOUT: (-32603, False),
    ErrorKind.REFUSED: "refusal",
    ErrorKind.LIMIT_EXCEEDED: "max_tokens",
    ErrorKind.BAD_INPUT: (-32602, False),
    ErrorKind.NOT_FOUND: (-32002, False),
    ErrorKind.UPSTREAM: (-32603, False),
    ErrorKind.CANCELLED: "cancelled",
    ErrorKind.INTERRUPTED: (-32603, True),
    ErrorKind.INTERNAL: (-32603, False),
    ErrorKind.UNAVAILABLE: (-32603, True),
}
"""The turn's stop reason, or the prompt's JSON-RPC error code and its data's ``retryable``."""

AG_UI = {
    ErrorKind.BUSY: ("RUN_ERROR", "busy", True),
    ErrorKind.TIMEOUT: ("RUN_ERROR", "timeout", False),
    ErrorKind.REFUSED: ("RUN_ERROR", "refused", False),
    ErrorKind.LIMIT_EXCEEDED: ("RUN_ERROR", "limit_exceeded", False),
    ErrorKind.BAD_INPUT: ("RUN_ERROR", "bad_input", False),
    ErrorKind.NOT_FOUND: ("RUN_ERROR", "not_found", False),
    ErrorKind.UPSTREAM: ("RUN_ERROR", "upstream", False),
    ErrorKind.CANCELLED: ("RUN_FINISHED", "cancelled", None),
    ErrorKind.INTERRUPTED: ("RUN_ERROR", "interrupted", True),
    ErrorKind.INTERNAL: ("RUN_ERROR", "internal", False),
    ErrorKind.UNAVAILABLE: ("RUN_ERROR", "unavailable", True),
}
"""The stream's last event, its ``code`` (or the outcome), and its metadata's ``retryable``."""


async def seen_over_openai() -> dict[ErrorKind, Any]:
    seen = {}
    app = create_app(Settings(adapters=["openai"]), AGENTS)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            for kind in ErrorKind:
                answer = await client.post(
                    "/v1/chat/completions",
                    json={"model": kind.value, "messages": [{"role": "user", "content": "hi"}]},
                )
                seen[kind] = (
                    answer.status_code,
                    answer.json()["error"]["code"],
                    answer.headers.get("retry-after"),
                    answer.headers.get("x-should-retry"),
                )
    return seen


async def seen_over_anthropic() -> dict[ErrorKind, Any]:
    seen = {}
    app = create_app(Settings(adapters=["anthropic"]), AGENTS)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            for kind in ErrorKind:
                messages = [{"role": "user", "content": "hi"}]
                body = {"model": kind.value, "max_tokens": 10, "messages": messages}
                answer = await client.post("/v1/messages", json=body)
                assert answer.json()["type"] == "error"
                seen[kind] = (
                    answer.status_code,
                    answer.json()["error"]["type"],
                    answer.headers.get("retry-after"),
                    answer.headers.get("x-should-retry"),
                )
    return seen


async def seen_over_orchestrate() -> dict[ErrorKind, Any]:
    seen = {}
    app = create_app(Settings(adapters=["orchestrate"]), AGENTS)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            for kind in ErrorKind:
                body = {"messages": [{"role": "user", "content": "hi"}]}
                answer = await client.post(f"/orchestrate/{kind.value}/chat/completions", json=body)
                error = answer.json()["error"]
                assert error["message"]
                seen[kind] = (
                    answer.status_code,
                    error["code"],
                    error["retryable"],
                    answer.headers.get("retry-after"),
                )
    return seen


async def seen_over_a2a() -> dict[ErrorKind, Any]:
    seen = {}
    app = create_app(a2a_settings(), AGENTS)
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            for kind in ErrorKind:
                url = f"http://localhost/a2a/{kind.value}"
                async with await sdk_client(url, "JSONRPC", http=http, streaming=False) as client:
                    task = final_task(await collect(client, user_message("do it")))
                metadata = task.status.message.metadata
                seen[kind] = (task.status.state, bool(metadata["retryable"]))
    return seen


async def seen_over_mcp() -> dict[ErrorKind, Any]:
    seen = {}
    async with running_app(AGENTS) as app, mcp_client(app) as client:
        for kind in ErrorKind:
            result = await client.call_tool(kind.value, {"message": "hi"})
            assert result.is_error
            assert result.meta is not None and result.meta[META_KEY]["kind"] == kind.value
            first = result.content[0]
            assert isinstance(first, TextContent)
            seen[kind] = first.text
    return seen


async def seen_over_acp() -> dict[ErrorKind, Any]:
    seen: dict[ErrorKind, Any] = {}
    async with acp_client(AGENTS) as client:
        for kind in ErrorKind:
            run = await client.run_sync("hi", agent=kind.value)
            error = run.error
            if error is None:
                seen[kind] = (run.status, None, None)
            else:
                assert error.data is not None
                data = error.data.model_dump()
                seen[kind] = (run.status, error.code, data["retryable"])
    return seen


class FakeClient:
    """The editor's side of Zed ACP: takes the session updates."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def seen_over_acp_zed() -> dict[ErrorKind, Any]:
    seen: dict[ErrorKind, Any] = {}
    for kind in ErrorKind:
        memory = LRUMemoryManager("acp_zed", max_sessions=10, ttl=60)
        zed = ZedAgent(AGENTS[kind.value], memory)
        zed.on_connect(FakeClient())  # type: ignore[arg-type]
        session = await zed.new_session(cwd="/")
        try:
            answer = await zed.prompt(session.session_id, [text_block("hi")])
        except RequestError as exc:
            seen[kind] = (exc.code, exc.data["retryable"])  # type: ignore[index]
        else:
            seen[kind] = answer.stop_reason
    return seen


async def seen_over_ag_ui() -> dict[ErrorKind, Any]:
    seen: dict[ErrorKind, Any] = {}
    async with ag_ui_client(AGENTS) as client:
        for kind in ErrorKind:
            *_, last = await run(client, kind.value, run_input([user("hi")]))
            if last.type == "RUN_FINISHED":
                seen[kind] = (last.type, last.outcome.type, None)  # type: ignore[attr-defined]
            else:
                retryable = last.metadata["retryable"]  # type: ignore[index]
                seen[kind] = (last.type, last.code, retryable)  # type: ignore[attr-defined]
    return seen


SEEN = {
    "openai": (seen_over_openai, OPENAI),
    "a2a": (seen_over_a2a, A2A),
    "mcp": (seen_over_mcp, MCP),
    "acp": (seen_over_acp, ACP),
    "acp_zed": (seen_over_acp_zed, ZED),
    "ag_ui": (seen_over_ag_ui, AG_UI),
    "anthropic": (seen_over_anthropic, ANTHROPIC),
    "orchestrate": (seen_over_orchestrate, ORCHESTRATE),
}


@pytest.mark.parametrize("adapter", SEEN)
async def test_every_kind_reads_as_the_protocols_nearest_equivalent(adapter: str) -> None:
    seen, expected = SEEN[adapter]
    assert await seen() == expected
