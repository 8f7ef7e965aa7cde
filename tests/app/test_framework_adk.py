"""Google ADK agents served by ``agenthost serve`` on the test upstream, over
Chat Completions, A2A (the SDK client) and MCP (the SDK client)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcp import Client

from tests.adapters.a2a.support import (
    artifact_text,
    collect,
    final_task,
    sdk_client,
    user_message,
)
from tests.app.framework_serving import cancel_mid_stream, serving, streamed_chat
from tests.upstream import FakeUpstream

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = """agents:
  - {name: adk-helper, description: An ADK agent., import: 'tests.app.adk_agents:helper'}
  - {name: adk-slow, import: 'tests.app.adk_agents:slow'}
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(
    upstream: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    _, upstream_url = upstream
    config = tmp_path_factory.mktemp("adk") / "agents.yaml"
    config.write_text(CONFIG)
    with serving(config, upstream_url, "openai,a2a,mcp") as url:
        yield url


async def test_a_chat_completion_streams_the_answer_after_a_tool_call(server: str) -> None:
    text, chunks = await streamed_chat(server, "adk-helper", 'use shout with {"text": "adk"}')
    # The fake answers with the tool's result, which ADK's LiteLLM wrapper sends as JSON.
    assert text.strip() == 'The result is {"result": "ADK"}.' and chunks > 1


async def test_a2a_second_turn_in_a_context_sees_the_first(
    server: str, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    async with await sdk_client(f"{server}/a2a/adk-helper", "JSONRPC", streaming=False) as client:
        first = final_task(await collect(client, user_message("remember the sea")))
        again = user_message("and now?", context_id=first.context_id, message_id="m-2")
        second = final_task(await collect(client, again))
    assert artifact_text(first).strip() == "upstream says: remember the sea"
    assert second.context_id == first.context_id
    assert artifact_text(second).strip() == "upstream says: and now?"
    sent = [(m["role"], m.get("content")) for m in fake.requests[-1]["messages"][1:]]
    assert sent[0] == ("user", "remember the sea") and sent[-1] == ("user", "and now?")
    assert sent[1][0] == "assistant" and "remember the sea" in str(sent[1][1])


async def test_mcp_calls_the_agent_as_a_tool(server: str) -> None:
    async with Client(f"{server}/mcp") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"adk-helper", "adk-slow"} <= names
        result = await client.call_tool("adk-helper", {"message": "over mcp"})
    assert result.structured_content is not None
    assert result.structured_content["text"].strip() == "upstream says: over mcp"


async def test_leaving_a_stream_closes_the_upstream_stream(
    server: str, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    await cancel_mid_stream(server, "adk-slow", fake)
