"""``a2a: {reply: message}``: an answer that finishes in one go is a direct Message."""

from __future__ import annotations

from collections.abc import Iterator

import pydantic
import pytest
from a2a.types import TaskState

from agenthost.app.server import create_app
from agenthost.app.specs import ConfigSpec
from tests.adapters.a2a.support import (
    TRANSPORTS,
    a2a_settings,
    artifact_text,
    collect,
    final_task,
    sdk_client,
    user_message,
)
from tests.upstream import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = """agents:
  - {name: direct, model: echo, a2a: {reply: message}}
  - {name: tasked, model: echo}
  - name: unreachable
    model: openai:gpt-4o-mini
    model_settings: {base_url: "http://127.0.0.1:1/v1", api_key: unused, max_retries: 0}
    a2a: {reply: message}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    config = tmp_path_factory.mktemp("reply") / "agents.yaml"
    config.write_text(CONFIG)
    app = create_app(a2a_settings(config=config))  # the agents built from the config
    with serve_in_thread(app, lifespan=True) as url:
        yield url


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_agent_replies_with_one_message_and_keeps_no_task(
    server: str, transport: str, streaming: bool
) -> None:
    async with await sdk_client(f"{server}/a2a/direct", transport, streaming=streaming) as client:
        events = await collect(client, user_message("hello direct"))
    assert len(events) == 1, events
    (event,) = events
    assert event.HasField("message"), event
    assert [p.text for p in event.message.parts] == ["hello direct"]
    assert event.message.context_id, "the reply names the context to continue in"


async def test_other_agents_still_answer_with_a_task(server: str) -> None:
    async with await sdk_client(f"{server}/a2a/tasked", "JSONRPC", streaming=False) as client:
        task = final_task(await collect(client, user_message("hello task")))
    assert artifact_text(task) == "hello task"


async def test_a_run_that_fails_still_ends_as_a_failed_task(server: str) -> None:
    client = await sdk_client(f"{server}/a2a/unreachable", "JSONRPC", streaming=False)
    async with client:
        task = final_task(await collect(client, user_message("anyone there?")))
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert task.status.message.parts[0].text


def test_the_reply_option_is_validated() -> None:
    spec = ConfigSpec.model_validate({"agents": [{"name": "a", "model": "echo"}]})
    assert spec.agents[0].a2a.reply == "task"
    bad = {"agents": [{"name": "a", "model": "echo", "a2a": {"reply": "postcard"}}]}
    with pytest.raises(pydantic.ValidationError, match="postcard"):
        ConfigSpec.model_validate(bad)
