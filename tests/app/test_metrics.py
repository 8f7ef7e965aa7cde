"""GET /metrics after real calls over every protocol, through each protocol's own SDK."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import anyio
import httpx
import openai
import pytest
from acp_sdk.client import Client as ACPClient
from mcp import Client as MCPClient

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel, ScriptedModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import calculator
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.a2a.support import collect, final_task, sdk_client, user_message
from tests.prometheus import samples, value
from tests.upstream import FakeUpstream, free_port, serve_in_thread

pytestmark = pytest.mark.anyio


def echo() -> ChatAgent:
    return ChatAgent("echo", EchoModel())


def agents(upstream_url: str) -> dict[str, Agent]:
    replies = [call("calculator", '{"expression": "6*7"}'), "it is 42"] * 4
    return {
        "echo": echo(),
        "calc": ChatAgent("calc", ScriptedModel(replies), tools=(calculator,)),
        "up": ChatAgent("up", OpenAIModel("fine", base_url=upstream_url, api_key="k")),
        "limited": ChatAgent(
            "limited",
            OpenAIModel("busy-briefly", base_url=upstream_url, api_key="k", max_retries=1),
        ),
    }


@pytest.fixture
def served(upstream: tuple[FakeUpstream, str]) -> Iterator[str]:
    settings = Settings(adapters=["openai", "a2a", "mcp", "acp"], a2a_grpc_port=free_port())
    with serve_in_thread(create_app(settings, agents(upstream[1])), lifespan=True) as url:
        yield url


async def scrape(url: str, **headers: str) -> str:
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{url}/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return response.text


async def test_every_protocol_moves_its_metrics(served: str) -> None:
    client = openai.AsyncOpenAI(base_url=f"{served}/v1", api_key="unused", max_retries=0)
    async with client:
        await client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "hi"}]
        )
        stream = await client.chat.completions.create(
            model="calc", messages=[{"role": "user", "content": "six times seven"}], stream=True
        )
        assert "42" in "".join(
            [c.choices[0].delta.content or "" async for c in stream if c.choices]
        )
        await client.responses.create(model="up", input="hello upstream")
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(
                model="limited", messages=[{"role": "user", "content": "hi"}]
            )
        with pytest.raises(openai.NotFoundError):
            await client.chat.completions.create(
                model="nobody", messages=[{"role": "user", "content": "hi"}]
            )

    for transport in ("JSONRPC", "GRPC"):
        async with await sdk_client(f"{served}/a2a/echo", transport) as a2a:
            task = final_task(await collect(a2a, user_message(f"over a2a {transport}")))
            assert task.status.state  # a finished task

    async with MCPClient(f"{served}/mcp") as mcp:
        result = await mcp.call_tool("echo", {"message": "over mcp"})
        assert not result.is_error

    async with ACPClient(base_url=f"{served}/acp") as acp:
        run = await acp.run_sync("over acp", agent="echo")
        assert run.status == "completed"

    all = samples(await scrape(served))
    requests = "agenthost_requests_total"
    for protocol in ("openai", "a2a", "mcp", "acp"):
        assert value(all, requests, protocol=protocol, agent="echo", outcome="ok") >= 1, protocol
        assert value(
            all, "agenthost_request_duration_seconds_count", protocol=protocol, agent="echo"
        )
        assert value(all, "agenthost_active_runs", protocol=protocol, agent="echo") == 0
    assert value(all, requests, protocol="a2a", agent="echo", outcome="ok") == 2  # HTTP, gRPC
    assert value(all, requests, protocol="openai", agent="calc", outcome="ok") == 1
    assert value(all, requests, protocol="openai", agent="up", outcome="ok") == 1
    assert value(all, requests, protocol="openai", agent="limited", outcome="server_error") == 1
    # A2A streams, and so does the streamed chat completion: a first token each.
    ttft = "agenthost_time_to_first_token_seconds_count"
    assert value(all, ttft, protocol="openai", agent="calc") == 1
    assert value(all, ttft, protocol="a2a", agent="echo") == 2
    assert value(all, "agenthost_tokens_total", agent="calc", direction="input") > 0
    assert value(all, "agenthost_tokens_total", agent="calc", direction="output") > 0
    assert value(all, "agenthost_tokens_total", agent="up", direction="output") > 0
    assert value(all, "agenthost_tool_calls_total", agent="calc", tool="calculator", outcome="ok")
    assert value(all, "agenthost_tool_duration_seconds_count", tool="calculator") == 1
    upstream = "agenthost_upstream_requests_total"
    assert value(all, upstream, agent="up", outcome="ok") == 1
    # The first try and the one retry, both refused.
    assert value(all, upstream, agent="limited", outcome="rate_limited") == 2
    # The Responses API and A2A keep sessions (stores) per protocol.
    assert value(all, "agenthost_sessions", protocol="openai") >= 1
    assert ("agenthost_session_evictions_total", frozenset({("protocol", "openai")})) in all
    # An unknown agent is refused before any run: no series names it.
    assert not any(("agent", "nobody") in labels for _, labels in all)


async def test_hostile_names_leave_the_series_bounded(served: str) -> None:
    async with httpx.AsyncClient(base_url=served) as http:
        before = len(samples(await scrape(served)))
        for n in range(10_000):
            name = f"bogus-{n}"
            body = {"model": name, "messages": [{"role": "user", "content": "x"}], "user": name}
            response = await http.post("/v1/chat/completions", json=body)
            assert response.status_code == 404
            if n % 1000 == 0:
                headers = {"x-request-id": name}
                response = await http.post(f"/a2a/{name}", json={}, headers=headers)
        after = samples(await scrape(served))
    assert len(after) == before, len(after) - before


async def test_promtool_accepts_the_exposition(served: str) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian package 'prometheus')")
    async with httpx.AsyncClient() as http:
        body = {"model": "calc", "messages": [{"role": "user", "content": "x"}]}
        await http.post(f"{served}/v1/chat/completions", json=body)
    text = await scrape(served)
    checked = await anyio.run_process(
        [promtool, "check", "metrics"], input=text.encode(), check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_metrics_need_a_key_unless_public(upstream: tuple[FakeUpstream, str]) -> None:
    for public in (False, True):
        settings = Settings(
            adapters=["openai"], api_keys=["metrics-key-0123456789"], metrics_public=public
        )
        app = create_app(settings, {"echo": echo()})
        with serve_in_thread(app, lifespan=True) as url:
            async with httpx.AsyncClient() as http:
                anonymous = await http.get(f"{url}/metrics")
                keyed = await http.get(
                    f"{url}/metrics", headers={"authorization": "Bearer metrics-key-0123456789"}
                )
        assert anonymous.status_code == (200 if public else 401)
        assert keyed.status_code == 200


async def test_a_metrics_port_of_its_own() -> None:
    port = free_port()
    settings = Settings(adapters=["openai"], api_keys=["metrics-key-0123456789"], metrics_port=port)
    app = create_app(settings, {"echo": echo()})
    with serve_in_thread(app, lifespan=True) as url:
        async with httpx.AsyncClient() as http:
            headers = {"authorization": "Bearer metrics-key-0123456789"}
            body = {"model": "echo", "messages": [{"role": "user", "content": "x"}]}
            await http.post(f"{url}/v1/chat/completions", json=body, headers=headers)
            response = await http.get(f"http://127.0.0.1:{port}/metrics")
    assert response.status_code == 200
    all = samples(response.text)
    assert value(all, "agenthost_requests_total", protocol="openai", agent="echo", outcome="ok")
    # The process's own series, as every Prometheus client library names them.
    assert value(all, "process_resident_memory_bytes") > 10_000_000
    assert value(all, "process_cpu_seconds_total") > 0
    assert value(all, "process_open_fds") > 0
    assert value(all, "python_gc_collections_total", generation="0") >= 0
    assert "python_info" in response.text
    # The loop watchdog's stalls, by cause, once the host's watchdog runs.
    for name in ("agenthost_loop_stalls_total", "agenthost_loop_stall_seconds_total"):
        for cause in ("blocked", "starved"):
            assert (name, frozenset({("cause", cause)})) in all, (name, cause)


async def test_metrics_off() -> None:
    app = create_app(Settings(adapters=["openai"], metrics=False), {"echo": echo()})
    with serve_in_thread(app, lifespan=True) as url:
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"{url}/metrics")).status_code == 404
