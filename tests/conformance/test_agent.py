"""The conformance agent, served from its config, acts out the TCK's scenarios."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a.client import Client
from a2a.types import TaskState
from google.protobuf.json_format import MessageToDict

from agenthost.app.build import load_agents
from tests.adapters.a2a.support import (
    a2a_settings,
    collect,
    final_task,
    in_process,
    sdk_client,
    user_message,
)

pytestmark = pytest.mark.anyio

CONFIG = Path(__file__).with_name("agents.yaml")


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    _, agents = load_agents(CONFIG)
    async with in_process(agents, a2a_settings(a2a_grpc_port=0)) as http:
        yield await sdk_client("http://localhost/a2a/tck", "JSONRPC", http=http, streaming=False)


async def run(client: Client, message_id: str) -> dict[str, object]:
    task = final_task(await collect(client, user_message("hi", message_id=message_id)))
    return MessageToDict(task)


async def test_file_data_and_url_outputs_become_artifact_parts(client: Client) -> None:
    file = await run(client, "tck-artifact-file-1")
    assert file["artifacts"][0]["parts"] == [  # type: ignore[index]
        {"raw": "dGNr", "mediaType": "text/plain", "filename": "output.txt"}
    ]
    data = await run(client, "tck-artifact-data-1")
    assert data["artifacts"][0]["parts"][0]["data"] == {"key": "value", "count": 42}  # type: ignore[index]
    url = await run(client, "tck-artifact-file-url-1")
    assert url["artifacts"][0]["parts"][0]["url"] == "https://example.com/output.txt"  # type: ignore[index]


async def test_questions_and_refusals_become_task_states(client: Client) -> None:
    asked = await run(client, "tck-input-required-1")
    assert asked["status"]["state"] == TaskState.Name(TaskState.TASK_STATE_INPUT_REQUIRED)  # type: ignore[index]
    rejected = await run(client, "tck-reject-task-1")
    assert rejected["status"]["state"] == TaskState.Name(TaskState.TASK_STATE_REJECTED)  # type: ignore[index]
    done = await run(client, "tck-stream-002-1")
    assert done["status"]["state"] == TaskState.Name(TaskState.TASK_STATE_COMPLETED)  # type: ignore[index]
    assert "artifacts" not in done


async def test_the_message_agent_answers_the_message_scenario_with_a_message() -> None:
    _, agents = load_agents(CONFIG)
    async with in_process(agents, a2a_settings(a2a_grpc_port=0)) as http:
        url = "http://localhost/a2a/tck-message"
        client = await sdk_client(url, "JSONRPC", http=http, streaming=False)
        (event,) = await collect(client, user_message("hi", message_id="tck-message-response-1"))
        asked = final_task(
            await collect(client, user_message("hi", message_id="tck-input-required-2"))
        )
    assert event.HasField("message"), event
    assert [p.text for p in event.message.parts] == ["Direct message response"]
    # A question still needs a task to be answered in.
    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
