"""CrewAI agents served by ``agenthost serve`` on the test upstream, over Chat
Completions and A2A (the SDK client). No MCP: CrewAI pins mcp<2, agenthost's
MCP adapter needs mcp>=2.3. Runs only where CrewAI is installed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

crewai = pytest.importorskip("crewai")

from tests.adapters.a2a.support import (  # noqa: E402
    artifact_text,
    collect,
    final_task,
    sdk_client,
    user_message,
)
from tests.app.framework_serving import chat, serving, streamed_chat  # noqa: E402
from tests.upstream import FakeUpstream  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = """agents:
  - {name: crew-helper, import: 'tests.app.crewai_agents:helper'}
  - {name: crew-slow, import: 'tests.app.crewai_agents:slow'}
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(
    upstream: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    _, upstream_url = upstream
    config = tmp_path_factory.mktemp("crewai") / "agents.yaml"
    config.write_text(CONFIG)
    with serving(config, upstream_url, "openai,a2a") as url:
        yield url


async def test_a_chat_completion_streams_the_answer(server: str) -> None:
    text, chunks = await streamed_chat(server, "crew-helper", "hello crew")
    assert text.startswith("upstream says:") and "hello crew" in text and chunks >= 1


async def test_a2a_second_turn_in_a_context_sees_the_first(
    server: str, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, _ = upstream
    async with await sdk_client(f"{server}/a2a/crew-helper", "JSONRPC", streaming=False) as client:
        first = final_task(await collect(client, user_message("remember the sea")))
        again = user_message("and now?", context_id=first.context_id, message_id="m-2")
        second = final_task(await collect(client, again))
    assert "remember the sea" in artifact_text(first)
    assert second.context_id == first.context_id and "and now?" in artifact_text(second)
    sent = [(m["role"], str(m.get("content"))) for m in fake.requests[-1]["messages"]]
    assert ("user", "remember the sea") in sent
    assert any(role == "assistant" and "remember the sea" in text for role, text in sent)


async def test_leaving_a_stream_mid_run_leaves_the_server_serving(server: str) -> None:
    # CrewAI's model call runs on to its end after agenthost's run is cancelled
    # (measured: the upstream stream is never closed early), so this checks what
    # agenthost owns: the client's leaving ends its request, and the next one answers.
    async with chat(server) as client:
        messages = [{"role": "user", "content": "take your time"}]
        stream = await client.chat.completions.create(
            model="crew-slow", messages=messages, stream=True
        )
        await asyncio.sleep(1)  # the agent is streaming from the upstream by now
        await stream.close()
    text, _ = await streamed_chat(server, "crew-helper", "still there?")
    assert "still there?" in text
