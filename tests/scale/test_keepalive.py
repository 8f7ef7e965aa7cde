"""Streams survive a proxy's read time-out: keep-alive comments through a real nginx.

nginx's ``proxy_read_timeout`` (2.5 s) is below the agent's silent tool call
(3.5 s, over 3 keep-alive intervals of 1 s). With keep-alives every stream
arrives whole, on every streaming protocol, through each real SDK client
(which must ignore the comment lines); a server whose keep-alive is longer
than the silence has its stream cut by nginx (the negative control).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import httpx
import openai
import pytest
from a2a.types import TaskState
from acp_sdk.client import Client as ACPClient
from acp_sdk.models import RunCompletedEvent
from mcp import Client as MCPClient

from tests.adapters.a2a.support import sdk_client, user_message
from tests.nginx import nginx_proxy
from tests.scale.test_replicas import Replica

CONFIG = "agents:\n  - {name: pausing, import: 'tests.scale.pausing_agents:pausing'}\n"
READ_TIMEOUT = 2.5


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """nginx URLs: ``kept`` (keep-alive every 1 s) and ``silent`` (every 30 s) servers."""
    kept = {"AGENTHOST_ADAPTERS": "openai,a2a,mcp,acp", "AGENTHOST_A2A_GRPC_PORT": "0"}
    servers = {}
    with ExitStack() as stack:
        for name, seconds, env in (("kept", "1", kept), ("silent", "30", {})):
            folder = tmp_path_factory.mktemp(name)
            server = Replica(folder, {**env, "AGENTHOST_STREAM_KEEPALIVE_SECONDS": seconds})
            server.config.write_text(CONFIG)
            stack.callback(server.kill)
            servers[name] = server
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(Replica.start, servers.values()))
        upstreams = {name: server.url for name, server in servers.items()}
        with nginx_proxy(upstreams, read_timeout=READ_TIMEOUT) as urls:
            yield urls


def _openai(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=60)


def _chat(url: str) -> str:
    # Closed here: a client left to the garbage collector (its stream cut by nginx)
    # warns of its unclosed socket in whichever later test the collection runs.
    with _openai(url) as client:
        stream = client.chat.completions.create(
            model="pausing", messages=[{"role": "user", "content": "chat"}], stream=True
        )
        return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


def test_a_chat_completions_stream_arrives_whole(proxied: dict[str, str]) -> None:
    assert _chat(proxied["kept"]) == "done: chat"


def test_the_events_are_unchanged_with_keep_alive_comments_between(
    proxied: dict[str, str],
) -> None:
    body = {"model": "pausing", "messages": [{"role": "user", "content": "raw"}], "stream": True}
    answer = httpx.post(f"{proxied['kept']}/v1/chat/completions", json=body, timeout=60)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.headers["cache-control"] == "no-cache"
    events = answer.content.split(b"\n\n")
    assert events.count(b": keep-alive") >= 2, answer.content  # 3.5 s of silence, one a second
    data = [e for e in events if e.startswith(b"data: ")]
    assert data[-1] == b"data: [DONE]" and events[-1] == b""
    assert all(e in (b"", b": keep-alive") or e.startswith(b"data: {") for e in events[:-2])


def test_without_keep_alives_nginx_cuts_the_stream(proxied: dict[str, str]) -> None:
    with pytest.raises((openai.APIError, httpx.TransportError)):
        _chat(proxied["silent"])


def test_a_responses_stream_arrives_whole(proxied: dict[str, str]) -> None:
    with _openai(proxied["kept"]) as client:
        stream = client.responses.create(model="pausing", input="responses", stream=True)
        events: list[Any] = list(stream)
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "done: responses"


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON"])
async def test_an_a2a_stream_arrives_whole(proxied: dict[str, str], transport: str) -> None:
    async with httpx.AsyncClient(timeout=60) as http:
        client = await sdk_client(f"{proxied['kept']}/a2a/pausing", transport, http=http)
        async with client:
            events = [event async for event in client.send_message(user_message("a2a"))]
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED, events
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert "".join(p.text for c in chunks for p in c.artifact.parts) == "done: a2a"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])  # handshake era, 2026-07-28 requests
async def test_an_mcp_stream_arrives_whole(proxied: dict[str, str], mode: str) -> None:
    url = f"{proxied['kept']}/mcp"
    async with MCPClient(url, mode=mode, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
        result = await client.call_tool("pausing", {"message": "mcp"})
    assert not result.is_error, result
    assert result.structured_content is not None
    assert result.structured_content["text"] == "done: mcp"


@pytest.mark.anyio
async def test_an_acp_stream_arrives_whole(proxied: dict[str, str]) -> None:
    async with ACPClient(base_url=f"{proxied['kept']}/acp", timeout=60) as client:
        events = [event async for event in client.run_stream("acp", agent="pausing")]
    assert isinstance(events[-1], RunCompletedEvent), events[-1]
    assert str(events[-1].run.output[0]) == "done: acp"
