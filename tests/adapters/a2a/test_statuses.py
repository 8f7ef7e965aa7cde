"""HTTP status codes and media types as the A2A 1.0 spec's tables say (raw HTTP + SDK client)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import orjson
import pytest
from a2a.types import CancelTaskRequest, ListTasksRequest, Message, Part, Role, SendMessageRequest
from a2a.utils.errors import ContentTypeNotSupportedError, TaskNotCancelableError

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from tests.adapters.a2a.support import V1, collect, final_task, in_process, rpc, sdk_client

pytestmark = pytest.mark.anyio

A2A_JSON = "application/a2a+json"
HELLO = {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
PDF = {
    "message": {
        "messageId": "m-2",
        "role": "ROLE_USER",
        "parts": [{"raw": "aGk=", "mediaType": "application/pdf"}],
    }
}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process({"echo": ChatAgent("echo", EchoModel())}) as client:
        yield client


async def test_cancelling_a_finished_task_is_409_with_the_a2a_media_type(
    http: httpx.AsyncClient,
) -> None:
    sent = await http.post("/a2a/echo/message:send", json=HELLO, headers=V1)
    assert sent.headers["content-type"].startswith(A2A_JSON)
    task_id = sent.json()["task"]["id"]
    answer = await http.post(f"/a2a/echo/tasks/{task_id}:cancel", json={}, headers=V1)
    assert answer.status_code == 409, answer.text
    assert answer.headers["content-type"].startswith(A2A_JSON)
    assert answer.json()["error"]["code"] == 409
    missing = await http.get("/a2a/echo/tasks/no-such-task", headers=V1)
    assert missing.status_code == 404
    assert missing.headers["content-type"].startswith(A2A_JSON)
    # The SDK client still reads it as the A2A error it is.
    async with await sdk_client("http://localhost/a2a/echo", "HTTP+JSON", http=http) as client:
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))


async def test_an_unsupported_part_type_is_415_over_http_json(http: httpx.AsyncClient) -> None:
    answer = await http.post("/a2a/echo/message:send", json=PDF, headers=V1)
    assert answer.status_code == 415, answer.text
    assert answer.headers["content-type"].startswith(A2A_JSON)
    assert answer.json()["error"]["code"] == 415
    # Over JSON-RPC the error is the protocol's own (-32005, in a 200).
    over_rpc = await http.post("/a2a/echo", json=rpc("SendMessage", PDF), headers=V1)
    assert over_rpc.status_code == 200 and over_rpc.json()["error"]["code"] == -32005
    pdf = Message(
        message_id="m-3",
        role=Role.ROLE_USER,
        parts=[Part(raw=b"%PDF", media_type="application/pdf")],
    )
    client = await sdk_client("http://localhost/a2a/echo", "HTTP+JSON", http=http, streaming=False)
    async with client:
        with pytest.raises(ContentTypeNotSupportedError):
            await collect(client, SendMessageRequest(message=pdf))


@pytest.mark.parametrize("path", ["/a2a/echo", "/a2a/echo/message:send"])
async def test_a_body_sent_as_text_plain_is_refused_415_and_not_run(
    http: httpx.AsyncClient, path: str
) -> None:
    body = rpc("SendMessage", HELLO) if path == "/a2a/echo" else HELLO
    headers = {**V1, "content-type": "text/plain"}
    answer = await http.post(path, content=orjson.dumps(body), headers=headers)
    assert answer.status_code == 415, answer.text
    async with await sdk_client("http://localhost/a2a/echo", "HTTP+JSON", http=http) as client:
        listed = await client.list_tasks(ListTasksRequest())
        assert list(listed.tasks) == [], "the refused body was run"
        # A JSON body on the same route is run.
        assert final_task(await collect(client, SendMessageRequest(message=text_message())))


def text_message() -> Message:
    return Message(message_id="m-4", role=Role.ROLE_USER, parts=[Part(text="hi")])
