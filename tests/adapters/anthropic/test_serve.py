"""``agenthost serve`` driven by the anthropic SDK over a real socket, as Claude Code
reaches it (``ANTHROPIC_BASE_URL``): a relay agent on the fake upstream, with an API key."""

import os
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from tests.commands import serving
from tests.upstream import FakeUpstream

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

KEY = "claude-key-0123456789abcdef"
CONFIG = """
agents:
  - name: relay
    model: openai:gpt-test
    model_settings: {{base_url: "{url}", api_key: k, max_retries: 0}}
    tools: [calculator]
"""
BASH: Any = {
    "name": "Bash",
    "description": "Run a shell command.",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def served(
    upstream: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    _, url = upstream
    config = tmp_path_factory.mktemp("anthropic") / "agents.yaml"
    config.write_text(CONFIG.format(url=url))
    env = {**os.environ, "AGENTHOST_ADAPTERS": "openai,anthropic", "AGENTHOST_API_KEYS": KEY}
    with serving(config, env) as (_, base):
        yield base


async def test_a_client_tool_round_trip_over_a_socket(served: str) -> None:
    client = anthropic.AsyncAnthropic(base_url=served, auth_token=KEY, api_key=None, max_retries=0)
    messages: list[Any] = [{"role": "user", "content": 'use Bash with {"command": "ls"}'}]
    async with client.messages.stream(
        model="relay", max_tokens=1000, tools=[BASH], messages=messages
    ) as stream:
        first = await stream.get_final_message()
    assert first.stop_reason == "tool_use"
    (call,) = first.content
    assert call.type == "tool_use" and call.name == "Bash" and call.input == {"command": "ls"}
    messages += [
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "README.md"}],
        },
    ]
    async with client.messages.stream(
        model="relay", max_tokens=1000, tools=[BASH], messages=messages
    ) as stream:
        text = "".join([piece async for piece in stream.text_stream])
    assert text.strip() == "The result is README.md."
    # The agent's own tool runs on the server.
    answer = await client.messages.create(
        model="relay", max_tokens=1000, messages=[{"role": "user", "content": "calculate 2+3"}]
    )
    assert answer.content[0].type == "text" and answer.content[0].text == "The result is 5."
    await client.close()
    wrong = anthropic.AsyncAnthropic(base_url=served, api_key="wrong-key-0123456789", max_retries=0)
    async with wrong:
        with pytest.raises(anthropic.AuthenticationError):
            await wrong.messages.create(model="relay", max_tokens=10, messages=messages[:1])
