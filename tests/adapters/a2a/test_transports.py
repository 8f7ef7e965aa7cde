"""The a2a-sdk client over JSON-RPC, HTTP+JSON and gRPC against the served app.

The app runs under uvicorn on 127.0.0.1 (as ``agenthost serve`` does), its
gRPC server on another port; each client discovers the agent by its card.
"""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest
from a2a.client import A2AClientError
from a2a.helpers import get_artifact_text
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.agents.models.openai import OpenAIModel
from tests.adapters.a2a.support import (
    TRANSPORTS,
    a2a_settings,
    artifact_text,
    collect,
    final_task,
    paced_agent,
    sdk_client,
    served,
    user_message,
)
from tests.principals import transcript_model
from tests.upstream import FakeUpstream

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(upstream: tuple[FakeUpstream, str]) -> Iterator[str]:
    _, upstream_url = upstream
    agents = {
        "echo": ChatAgent("echo", EchoModel(), description="Repeats what you say."),
        "memory": ChatAgent("memory", transcript_model()),
        "paced": paced_agent(),
        "relay": ChatAgent("relay", OpenAIModel("slow", base_url=upstream_url, max_retries=0)),
    }
    with served(agents, a2a_settings()) as url:
        yield url


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_send_returns_the_completed_task_with_its_artifact(
    server: str, transport: str
) -> None:
    client = await sdk_client(f"{server}/a2a/echo", transport, streaming=False)
    async with client:
        assert client._card.name == "echo"  # type: ignore[attr-defined]
        events = await collect(client, user_message("hello over the wire"))
    task = final_task(events)
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(task) == "hello over the wire"
    assert task.context_id, "a context id is generated when the client sends none"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_stream_sends_the_text_in_chunks_that_join_to_the_answer(
    server: str, transport: str
) -> None:
    async with await sdk_client(f"{server}/a2a/paced", transport) as client:
        events = await collect(client, user_message("go"))
        stored = await client.get_task(GetTaskRequest(id=final_task(events).id))
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert len(chunks) > 1, "the text came in one piece, not streamed"
    assert chunks[0].append is False and all(c.append for c in chunks[1:])
    assert chunks[-1].last_chunk and not any(c.last_chunk for c in chunks[:-1])
    streamed = "".join(p.text for c in chunks for p in c.artifact.parts)
    assert streamed == "".join(f"w{i} " for i in range(12))
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states[0] == TaskState.TASK_STATE_WORKING
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(stored) == streamed, "the stored artifact differs from the stream"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_blocking_answer_is_one_text_part_however_it_was_streamed(
    server: str, transport: str
) -> None:
    # The paced agent streams 12 pieces; a client that does not stream gets them joined.
    async with await sdk_client(f"{server}/a2a/paced", transport, streaming=False) as client:
        task = final_task(await collect(client, user_message("go")))
        stored = await client.get_task(GetTaskRequest(id=task.id))
    for got in (task, stored):
        assert len(got.artifacts) == 1
        (artifact,) = got.artifacts
        assert len(artifact.parts) == 1, f"{len(artifact.parts)} parts for one answer"
        assert get_artifact_text(artifact) == "".join(f"w{i} " for i in range(12))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tasks_can_be_got_and_listed_and_a_context_continues(
    server: str, transport: str
) -> None:
    async with await sdk_client(f"{server}/a2a/memory", transport, streaming=False) as client:
        first = final_task(await collect(client, user_message(f"remember {transport}")))
        again = user_message("what did I say?", context_id=first.context_id, message_id="m-2")
        second = final_task(await collect(client, again))
        assert second.context_id == first.context_id and second.id != first.id
        assert f"remember {transport}" in artifact_text(second), "the context was forgotten"

        got = await client.get_task(GetTaskRequest(id=first.id))
        assert got.status.state == TaskState.TASK_STATE_COMPLETED
        listed = await client.list_tasks(ListTasksRequest(context_id=first.context_id))
        assert {t.id for t in listed.tasks} == {first.id, second.id}

        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="no-such-task"))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_cancel_stops_the_run_and_closes_the_upstream_stream(
    server: str, upstream: tuple[FakeUpstream, str], transport: str
) -> None:
    fake, _ = upstream
    before = fake.abandoned
    async with await sdk_client(f"{server}/a2a/relay", transport) as client:
        stream = client.send_message(user_message("go"))
        task_id = ""
        async for event in stream:
            if event.HasField("artifact_update"):
                task_id = event.artifact_update.task_id
                break  # the upstream is streaming now
        await stream.aclose()  # type: ignore[attr-defined]
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        for _ in range(100):
            if fake.abandoned > before:
                break
            await anyio.sleep(0.05)
        assert fake.abandoned == before + 1, "the upstream stream was left open"
        got = await client.get_task(GetTaskRequest(id=task_id))
        assert got.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_unknown_agent_is_not_found(server: str, transport: str) -> None:
    if transport == "GRPC":
        # A gRPC client names the agent by tenant: take a real card, change the tenant.
        async with await sdk_client(f"{server}/a2a/echo", transport) as client:
            client._transport._tenant = "nobody"  # type: ignore[attr-defined]
            with pytest.raises(A2AClientError, match="nobody"):
                await collect(client, user_message("hi"))
        return
    with pytest.raises(A2AClientError, match=r"404|nobody"):
        await sdk_client(f"{server}/a2a/nobody", transport)
