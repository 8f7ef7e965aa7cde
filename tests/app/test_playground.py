"""The playground's page, files and agent list, in-process; and the progress
comments of /v1/responses streams that it shows (the openai SDK ignores them).

The page itself in a real browser: tests/app/test_playground_browser.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager

from agenthost.adapters.openai.responses_stream import PROGRESS_OUTPUT_CHARS
from agenthost.agents import Agent, ChatAgent, ModelSettings, tool
from agenthost.agents.composition import AgentTool, PipelineAgent
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.agents.models.local import LocalModel
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.tools.builtin import calculator, current_time
from agenthost.agents.tools.reach import callable_tools
from agenthost.app.build import build_registry
from agenthost.app.config import load_config
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.conftest import openai_client
from tests.principals import bearer, keyed_settings

pytestmark = pytest.mark.anyio

PAGE = (
    "/",
    "/playground",
    "/playground/app.js",
    "/playground/ai-sdk.js",
    "/playground/style.css",
)
ROOT = Path(__file__).resolve().parents[2]


def agents() -> dict[str, Agent]:
    def sums(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "tool":
            return f"It is {last.parts[0].content}."  # type: ignore[union-attr]
        return call("calculator", '{"expression": "6*7"}')

    expert = ChatAgent("expert", FunctionModel(lambda r: "expert says hi"))
    lead = ChatAgent("lead", FunctionModel(lambda r: _lead(r)), tools=(AgentTool(expert),))
    upper = ChatAgent("upper", FunctionModel(lambda r: r.messages[-1].text.upper()))
    exclaim = ChatAgent("exclaim", FunctionModel(lambda r: r.messages[-1].text + "!"))
    return {
        "echo": ChatAgent("echo", EchoModel(), description="Repeats."),
        "sums": ChatAgent("sums", FunctionModel(sums), tools=(calculator,)),
        "lead": lead,
        "loud": PipelineAgent("loud", [upper, exclaim]),
    }


def _lead(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"The expert said: {last.parts[0].content}"  # type: ignore[union-attr]
    return call("expert", '{"task": "hi"}')


async def get(app: object, path: str, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        return await client.get(path, headers=headers)


async def test_the_page_and_its_files_are_public_and_fetch_nothing_elsewhere() -> None:
    app = create_app(keyed_settings(), agents())
    async with LifespanManager(app):
        for path in PAGE:
            answer = await get(app, path)
            assert answer.status_code == 200, path
        page = await get(app, "/")
        assert page.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "connect-src 'self'" in page.headers["content-security-policy"]
        for path in PAGE:
            assert "http://" not in (await get(app, path)).text
            assert "https://" not in (await get(app, path)).text


async def test_the_agent_list_needs_a_key_and_hides_what_the_key_may_not_use() -> None:
    allow = {"sums": frozenset({"alice"})}
    app = create_app(keyed_settings(), agents(), allow=allow)
    async with LifespanManager(app):
        assert (await get(app, "/playground/agents.json")).status_code == 401
        alice = (await get(app, "/playground/agents.json", **bearer("alice"))).json()
        bob = (await get(app, "/playground/agents.json", **bearer("bob"))).json()
    assert alice["auth"] is True
    assert alice["base_url"] == "http://localhost"
    assert alice["prefixes"] == {
        "openai": "/v1",
        "a2a": "/a2a",
        "mcp": "/mcp",
        "acp": "/acp",
        "ag_ui": "/ag-ui",
        "ai_sdk": "/ai-sdk",
        "anthropic": "/v1/messages",
        "orchestrate": "/orchestrate",
    }
    assert [a["name"] for a in alice["agents"]] == ["echo", "sums", "lead", "loud"]
    assert [a["name"] for a in bob["agents"]] == ["echo", "lead", "loud"]
    sums = alice["agents"][1]
    assert sums["tools"] == ["calculator"]
    assert sums["model"] == "function"
    assert sums["protocols"] == [
        "openai",
        "a2a",
        "mcp",
        "acp",
        "ag_ui",
        "ai_sdk",
        "anthropic",
        "orchestrate",
        "mcp_stdio",
        "acp_zed",
    ]
    assert alice["agents"][0] == {
        "name": "echo",
        "description": "Repeats.",
        "model": "echo",
        "kind": "ChatAgent",
        "tools": [],
        "steps": [],
        "protocols": [
            "openai",
            "a2a",
            "mcp",
            "acp",
            "ag_ui",
            "ai_sdk",
            "anthropic",
            "orchestrate",
            "mcp_stdio",
            "acp_zed",
        ],
    }
    assert alice["agents"][3]["steps"] == ["upper", "exclaim"]


async def test_protocols_are_those_that_serve_the_agent() -> None:
    app = create_app(Settings(adapters=["openai", "a2a"]), agents())
    async with LifespanManager(app):
        listed = (await get(app, "/playground/agents.json")).json()
    assert listed["auth"] is False
    assert listed["prefixes"] == {"openai": "/v1", "a2a": "/a2a"}
    assert listed["agents"][0]["protocols"] == ["openai", "a2a", "mcp_stdio", "acp_zed"]


async def test_it_can_be_turned_off() -> None:
    app = create_app(Settings(playground=False), agents())
    async with LifespanManager(app):
        for path in (*PAGE, "/playground/agents.json"):
            assert (await get(app, path)).status_code == 404, path


def progress(stream: str) -> list[dict[str, object]]:
    prefix = ": agenthost "
    return [
        json.loads(line[len(prefix) :]) for line in stream.split("\n") if line.startswith(prefix)
    ]


async def stream(app: object, model: str, text: str) -> str:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        body = {"model": model, "input": text, "stream": True}
        answer = await client.post("/v1/responses", json=body)
        assert answer.status_code == 200
        return answer.text


async def test_responses_streams_carry_tool_calls_and_steps_as_comments() -> None:
    app = create_app(Settings(), agents())
    async with LifespanManager(app):
        sums = progress(await stream(app, "sums", "six times seven?"))
        lead = progress(await stream(app, "lead", "ask"))
        loud = progress(await stream(app, "loud", "hey"))
        assert progress(await stream(app, "echo", "hi")) == []
    assert [(e["type"], e["name"]) for e in sums] == [
        ("tool_call", "calculator"),
        ("tool_result", "calculator"),
    ]
    assert sums[0]["arguments"] == '{"expression": "6*7"}'
    assert sums[1]["output"] == "42" and sums[1]["is_error"] is False
    assert sums[1]["truncated"] is False
    assert sums[0]["id"] == sums[1]["id"]
    assert lead[0]["type"] == "tool_call" and lead[0]["name"] == "expert"
    assert {"type": "agent", "agents": ["expert"]} in lead
    assert lead[-1]["type"] == "tool_result" and lead[-1]["output"] == "expert says hi"
    # The last step's text is the pipeline's own answer: only earlier steps are announced.
    assert loud == [{"type": "agent", "agents": ["upper"]}]


async def test_the_openai_sdk_reads_such_a_stream_as_before() -> None:
    async with openai_client(agents()) as client:
        events = [
            e async for e in await client.responses.create(model="sums", input="x", stream=True)
        ]
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "It is 42."


async def test_a_long_tool_result_is_cut_in_the_comment_not_for_the_model() -> None:
    @tool
    def long() -> str:
        """Ten thousand characters."""
        return "x" * 10_000

    def reply(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "tool":
            return str(len(last.parts[0].content))  # type: ignore[union-attr]
        return call("long")

    app = create_app(Settings(), {"long": ChatAgent("long", FunctionModel(reply), tools=(long,))})
    async with LifespanManager(app):
        text = await stream(app, "long", "go")
    result = progress(text)[-1]
    assert result["output"] == "x" * PROGRESS_OUTPUT_CHARS and result["truncated"] is True
    assert '"text":"10000"' in text  # the model saw all of it


def tool_names(agent: ChatAgent) -> list[str]:
    return [tool.name for tool in callable_tools(agent)]


def test_an_agent_on_the_local_model_shows_only_the_tools_tool_choice_forces() -> None:
    # The local model never chooses a tool itself: listing them would promise calls.
    def local(tool_choice: str | None) -> ChatAgent:
        settings = ModelSettings(tool_choice=tool_choice)
        tools = (calculator, current_time)
        return ChatAgent("a", LocalModel("smollm2"), tools=tools, model_settings=settings)

    assert tool_names(local(None)) == []
    assert tool_names(local("auto")) == []
    assert tool_names(local("calculator")) == ["calculator"]
    assert tool_names(local("required")) == ["calculator", "current_time"]
    # A model that chooses its tools shows them all, unless tool_choice is none.
    chooses = FunctionModel(lambda r: "hi")
    assert tool_names(ChatAgent("b", chooses, tools=(calculator,))) == ["calculator"]
    none = ModelSettings(tool_choice="none")
    assert tool_names(ChatAgent("c", chooses, tools=(calculator,), model_settings=none)) == []


@pytest.mark.parametrize("name", ["agents.yaml", "ollama.yaml"])
def test_the_shipped_configs_give_no_agent_a_tool_it_cannot_call(name: str) -> None:
    registry = build_registry(load_config(ROOT / "config" / name, environ={}))
    for agent in registry.values():
        assert isinstance(agent, ChatAgent)
        configured = [t.name for t in agent.options.tools or ()]
        assert tool_names(agent) == configured, agent.name
    assert tool_names(registry["assistant"]) == []


def test_the_ollama_config_keeps_the_tools_demo_on_a_model_that_chooses_them() -> None:
    registry = build_registry(load_config(ROOT / "config" / "ollama.yaml", environ={}))
    assert tool_names(registry["ollama"]) == ["calculator", "current_time"]
