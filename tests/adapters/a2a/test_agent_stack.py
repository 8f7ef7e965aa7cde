"""IBM Agent Stack's extensions on the A2A surface, with the a2a-sdk agenthost uses:
the card's extensions, the platform's LLM used per request, trajectory entries for a
tool call and for the model's reasoning, citations of a tool's sources, approvals and
typed forms, error details on a failure (the agentstack-sdk client side is
``test_agent_stack_sdk.py``, in a venv of its own)."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.types import GetTaskRequest, SendMessageRequest, StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict, ParseDict

from agenthost.adapters.a2a import agent_stack
from agenthost.app.server import create_app
from tests.adapters.a2a.agent_stack_tools import BROKE_OFF, SOURCES, THOUGHT
from tests.adapters.a2a.support import (
    a2a_settings,
    artifact_text,
    collect,
    final_task,
    sdk_client,
    user_message,
)
from tests.adapters.approvals import ARGUMENTS, QUESTION, RAN, STACKER, WAS_DECLINED
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

AGENTHOST_KEY = "agenthost-own-key"
PLATFORM_KEY = "platform-key-123"

CONFIG = """agents:
  - name: helper
    description: Calculates for Agent Stack.
    model: agentstack
    tools: [calculator]
    a2a: {agent_stack: true}
  - name: fixed
    model: openai:relay
    model_settings: {base_url: "UPSTREAM/v1", api_key: AGENTHOST_KEY}
    tools: [calculator]
    a2a: {agent_stack: true}
  - name: asker
    model: openai:relay
    model_settings: {base_url: "UPSTREAM/v1", api_key: AGENTHOST_KEY}
    tools: [ask_user, "tests.adapters.a2a.agent_stack_tools:search"]
    a2a: {agent_stack: true}
  - {name: stacker, import: "tests.adapters.approvals:stacker", a2a: {agent_stack: true}}
  - name: thinker
    model: openai:reasoner
    model_settings: {base_url: "UPSTREAM/v1", api_key: AGENTHOST_KEY}
    tools: [calculator]
    a2a: {agent_stack: true}
  - name: lead
    model: openai:relay
    model_settings: {base_url: "UPSTREAM/v1", api_key: AGENTHOST_KEY}
    agents: [fixed]
    a2a: {agent_stack: true}
  - name: ponderer
    import: "tests.adapters.a2a.agent_stack_tools:ponderer"
    a2a: {agent_stack: true}
  - {name: plain, model: echo}
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[FakeUpstream, str]]:
    fake = FakeUpstream()
    with serve_in_thread(fake.app) as url:
        yield fake, url


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, upstream: tuple[FakeUpstream, str]
) -> Iterator[str]:
    config = tmp_path_factory.mktemp("agentstack") / "agents.yaml"
    text = CONFIG.replace("UPSTREAM", upstream[1]).replace("AGENTHOST_KEY", AGENTHOST_KEY)
    config.write_text(text)
    app = create_app(a2a_settings(config=config))
    with serve_in_thread(app, lifespan=True) as url:
        yield url


def with_llm(text: str, base: str, model: str) -> SendMessageRequest:
    request = user_message(text)
    fulfilment = {"api_base": f"{base}/v1", "api_key": PLATFORM_KEY, "api_model": model}
    ParseDict(
        {agent_stack.LLM: {"llm_fulfillments": {"default": fulfilment}}},
        request.message.metadata,
    )
    return request


def card_extensions(server: str, agent: str) -> dict[str, dict[str, object]]:
    card = httpx.get(f"{server}/a2a/{agent}/.well-known/agent-card.json").json()
    return {e["uri"]: e.get("params", {}) for e in card["capabilities"].get("extensions", [])}


async def test_the_card_carries_agent_stack_extensions(server: str) -> None:
    extensions = card_extensions(server, "helper")
    assert set(extensions) == {
        agent_stack.AGENT_DETAIL,
        agent_stack.TRAJECTORY,
        agent_stack.ERROR,
        agent_stack.FORM,
        agent_stack.APPROVAL,
        agent_stack.CITATION,
        agent_stack.LLM,
    }
    assert extensions[agent_stack.APPROVAL] == {}  # the SDK's ApprovalExtensionParams
    detail = extensions[agent_stack.AGENT_DETAIL]
    assert detail["framework"] == "agenthost"
    assert detail["interaction_mode"] == "multi-turn"
    assert [t["name"] for t in detail["tools"]] == ["calculator"]  # type: ignore[attr-defined]
    assert "default" in extensions[agent_stack.LLM]["llm_demands"]  # type: ignore[operator]


async def test_other_agents_have_no_extensions(server: str) -> None:
    assert card_extensions(server, "plain") == {}
    assert agent_stack.LLM not in card_extensions(server, "fixed")


async def test_the_platform_model_answers_with_trajectory_entries(
    server: str, upstream: tuple[FakeUpstream, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fake, base = upstream
    seen = len(fake.keys)
    async with await sdk_client(f"{server}/a2a/helper", "JSONRPC") as client:
        events = await collect(client, with_llm("calculate 6*7", base, "platform-model"))
    statuses = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert statuses[-1] == TaskState.TASK_STATE_COMPLETED
    chunks = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert "".join(p.text for a in chunks for p in a.parts).strip() == "The result is 42."
    assert fake.keys[seen:] == [f"Bearer {PLATFORM_KEY}"] * 2
    assert {r["model"] for r in fake.requests[seen:]} == {"platform-model"}
    entries = trajectory_entries(events)
    assert [e["title"] for e in entries] == ["calculator", "calculator"]
    assert entries[0]["content"] == '{"expression": "6*7"}'
    assert entries[1]["content"] == "42"
    assert entries[0]["group_id"] == entries[1]["group_id"]
    assert caplog.records and PLATFORM_KEY not in caplog.text


def trajectory_entries(events: list[StreamResponse]) -> list[dict[str, Any]]:
    return [
        MessageToDict(e.status_update.status.message.metadata)[agent_stack.TRAJECTORY]
        for e in events
        if e.HasField("status_update")
        and agent_stack.TRAJECTORY in e.status_update.status.message.metadata
    ]


async def test_each_steps_reasoning_is_one_trajectory_entry(server: str) -> None:
    async with await sdk_client(f"{server}/a2a/thinker", "JSONRPC") as client:
        events = await collect(client, user_message("calculate 6*7"))
    entries = trajectory_entries(events)
    # The upstream streams each step's reasoning word by word: one entry a step.
    assert [(e["title"], e["content"]) for e in entries] == [
        (agent_stack.REASONING, "Thinking about calculate 6*7."),
        ("calculator", '{"expression": "6*7"}'),
        ("calculator", "42"),
        (agent_stack.REASONING, "Thinking about 42."),
    ]
    assert entries[0].get("group_id") is None
    # The last step's reasoning comes before its answer, which holds none of it.
    order = [
        "text" if e.HasField("artifact_update") else "entry"
        for e in events
        if e.HasField("artifact_update")
        or agent_stack.TRAJECTORY in e.status_update.status.message.metadata
    ]
    assert order[:5] == ["entry"] * 4 + ["text"] and set(order[5:]) <= {"text"}
    chunks = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert "".join(p.text for a in chunks for p in a.parts).strip() == "The result is 42."
    statuses = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert statuses[-1] == TaskState.TASK_STATE_COMPLETED


async def test_a_non_streamed_task_keeps_its_entries_in_its_history(server: str) -> None:
    client = await sdk_client(f"{server}/a2a/thinker", "JSONRPC", streaming=False)
    async with client:
        task = final_task(await collect(client, user_message("calculate 6*7")))
    assert artifact_text(task).strip() == "The result is 42."
    kept = [
        MessageToDict(m.metadata)[agent_stack.TRAJECTORY]["title"]
        for m in task.history
        if agent_stack.TRAJECTORY in m.metadata
    ]
    assert kept == [agent_stack.REASONING, "calculator", "calculator", agent_stack.REASONING]


async def test_reasoning_before_a_failure_is_sent_before_its_error(server: str) -> None:
    async with await sdk_client(f"{server}/a2a/ponderer", "JSONRPC") as client:
        events = await collect(client, user_message("hi"))
    assert [(e["title"], e["content"]) for e in trajectory_entries(events)] == [
        (agent_stack.REASONING, THOUGHT)
    ]
    last = events[-1].status_update.status
    assert last.state == TaskState.TASK_STATE_FAILED
    error = MessageToDict(last.message.metadata)[agent_stack.ERROR]["error"]
    assert BROKE_OFF in error["message"]


async def test_a_sub_agents_tool_calls_are_entries_not_notes(server: str) -> None:
    async with await sdk_client(f"{server}/a2a/lead", "JSONRPC") as client:
        events = await collect(client, user_message('use fixed with {"task": "calculate 6*7"}'))
    entries = trajectory_entries(events)
    assert [(e["title"], e["group_id"]) for e in entries] == [
        ("fixed", "call_up_1"),
        ("fixed: calculator", "fixed: call_up_1"),  # the sub-agent's model's call id
        ("fixed: calculator", "fixed: call_up_1"),
        ("fixed", "call_up_1"),
    ]
    assert [e["content"] for e in entries[1:3]] == ['{"expression": "6*7"}', "42"]
    working = [
        e.status_update.status.message
        for e in events
        if e.status_update.status.state == TaskState.TASK_STATE_WORKING
    ]
    assert not any(part.text for message in working for part in message.parts)
    statuses = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert statuses[-1] == TaskState.TASK_STATE_COMPLETED


async def test_the_task_keeps_no_key(server: str, upstream: tuple[FakeUpstream, str]) -> None:
    _, base = upstream
    client = await sdk_client(f"{server}/a2a/helper", "JSONRPC", streaming=False)
    async with client:
        task = final_task(await collect(client, with_llm("hi", base, "platform-model")))
        stored = await client.get_task(GetTaskRequest(id=task.id, history_length=10))
    assert artifact_text(task).strip() == "upstream says: hi"
    for kept in (task, stored):
        assert PLATFORM_KEY not in str(MessageToDict(kept))
        assert "platform-model" in str(MessageToDict(kept))  # the rest of the metadata is kept


async def test_without_a_fulfilment_the_task_is_rejected_with_error_details(server: str) -> None:
    client = await sdk_client(f"{server}/a2a/helper", "JSONRPC", streaming=False)
    async with client:
        task = final_task(await collect(client, user_message("hello")))
    assert task.status.state == TaskState.TASK_STATE_REJECTED  # a client error
    error = MessageToDict(task.status.message.metadata)[agent_stack.ERROR]["error"]
    assert "services/llm/v1" in error["message"]
    assert error["title"]


async def test_an_agent_with_its_own_model_keeps_its_key(
    server: str, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, base = upstream
    seen = len(fake.keys)
    client = await sdk_client(f"{server}/a2a/fixed", "JSONRPC", streaming=False)
    async with client:
        task = final_task(await collect(client, with_llm("hi", base, "platform-model")))
    assert artifact_text(task).strip() == "upstream says: hi"
    assert fake.keys[seen:] == [f"Bearer {AGENTHOST_KEY}"]


def test_the_platform_url_is_put_in_the_endpoint() -> None:
    request = with_llm("hi", "{platform_url}/api/v1/openai", "m")
    llm = agent_stack.fulfilment(request.message, "http://platform:8333/")
    assert llm is not None
    assert llm.api_base == "http://platform:8333/api/v1/openai/v1"
    assert "platform-key" not in repr(llm)  # never in a log line that prints it
    assert agent_stack.fulfilment(user_message("hi").message, "http://x") is None


async def test_a_question_is_a_form_and_its_response_answers_it(server: str) -> None:
    client = await sdk_client(f"{server}/a2a/asker", "JSONRPC", streaming=False)
    async with client:
        ask = 'use ask_user with {"question": "Which city?"}'
        task = final_task(await collect(client, user_message(ask)))
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        form = MessageToDict(task.status.message.metadata)[agent_stack.FORM]
        assert form["title"] == "Which city?"
        assert [(f["id"], f["type"]) for f in form["fields"]] == [("answer", "text")]
        reply = user_message("", task_id=task.id, context_id=task.context_id, message_id="m-2")
        del reply.message.parts[:]
        values = {"values": {"answer": {"type": "text", "value": "Paris"}}}
        ParseDict({agent_stack.FORM: values}, reply.message.metadata)
        task = final_task(await collect(client, reply))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(task).strip() == "The result is Paris."


BOOKING = {
    "type": "object",
    "description": "Where and when.",
    "properties": {
        "city": {"type": "string", "title": "City", "description": "Where to eat."},
        "guests": {"type": "integer", "title": "Guests", "default": 2},
        "day": {"type": "string", "format": "date", "title": "Day"},
        "seating": {"type": "string", "enum": ["in", "out"], "enumNames": ["Inside", "Outside"]},
        "extras": {"type": "array", "items": {"enum": ["wine", "cake"]}},
        "vegan": {"type": "boolean", "description": "Vegan menu"},
    },
    "required": ["city", "guests"],
}


def new_id() -> str:
    return str(uuid.uuid4())


def form_response(task: Any, values: dict[str, Any], uri: str = agent_stack.FORM) -> Any:
    """The client's response in the task: no text, the values in its metadata."""
    reply = user_message("", task_id=task.id, context_id=task.context_id, message_id=new_id())
    del reply.message.parts[:]
    ParseDict({uri: values}, reply.message.metadata)
    return reply


async def test_a_question_with_a_form_is_a_typed_form_its_values_answer(server: str) -> None:
    question = {"question": "Book a table?", "schema": BOOKING}
    client = await sdk_client(f"{server}/a2a/asker", "JSONRPC", streaming=False)
    async with client:
        task = final_task(
            await collect(client, user_message(f"use ask_user with {json.dumps(question)}"))
        )
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        form = MessageToDict(task.status.message.metadata)[agent_stack.FORM]
        assert form["title"] == "Book a table?" and form["description"] == "Where and when."
        fields = {f["id"]: f for f in form["fields"]}
        assert {name: f["type"] for name, f in fields.items()} == {
            "city": "text",
            "guests": "text",
            "day": "date",
            "seating": "singleselect",
            "extras": "multiselect",
            "vegan": "checkbox",
        }
        assert fields["city"] == {
            "id": "city", "label": "City", "required": True, "type": "text",
            "placeholder": "Where to eat.",
        }  # fmt: skip
        assert fields["guests"]["default_value"] == "2" and fields["guests"]["required"]
        assert fields["seating"]["options"] == [
            {"id": "in", "label": "Inside"},
            {"id": "out", "label": "Outside"},
        ]
        assert [o["id"] for o in fields["extras"]["options"]] == ["wine", "cake"]
        assert fields["vegan"]["content"] == "Vegan menu" and not fields["vegan"]["required"]
        values = {
            "city": {"type": "text", "value": "Paris"},
            "guests": {"type": "text", "value": "4"},
            "day": {"type": "date", "value": "2026-12-24"},
            "seating": {"type": "singleselect", "value": "out"},
            "extras": {"type": "multiselect", "value": ["cake"]},
            "vegan": {"type": "checkbox", "value": True},
        }
        task = final_task(await collect(client, form_response(task, {"values": values})))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    answer = artifact_text(task).strip().removeprefix("The result is ").removesuffix(".")
    assert json.loads(answer) == {
        "action": "accept",
        "content": {
            "city": "Paris",
            "guests": 4,  # typed by the schema: the SDK has no number field
            "day": "2026-12-24",
            "seating": "out",
            "extras": ["cake"],
            "vegan": True,
        },
    }


async def test_a_tool_naming_its_sources_is_cited(server: str) -> None:
    async with await sdk_client(f"{server}/a2a/asker", "JSONRPC") as client:
        events = await collect(client, user_message('use search with {"query": "agenthost"}'))
    statuses = [e.status_update.status for e in events if e.HasField("status_update")]
    assert statuses[-1].state == TaskState.TASK_STATE_COMPLETED
    cited = [
        MessageToDict(s.message.metadata)[agent_stack.CITATION]
        for s in statuses
        if agent_stack.CITATION in s.message.metadata
    ]
    assert cited == [
        {
            "citations": [
                {
                    "url": "https://example.org/agenthost",
                    "title": "agenthost",
                    "description": SOURCES[0]["snippet"],  # type: ignore[index]
                },
                {
                    "url": "https://example.org/a2a",
                    "title": None,
                    "description": None,
                },
            ]
        }
    ]


def test_only_a_result_naming_sources_cites() -> None:
    assert agent_stack.citations_of("42") == []
    assert agent_stack.citations_of('{"sources": "https://x"}') == []
    assert agent_stack.citations_of('{"sources": [{"description": "no url"}, 3]}') == []
    assert agent_stack.citations_of('{"sources": [{"title": "t"}]}')[0]["title"] == "t"


@pytest.mark.parametrize(
    ("decision", "answer", "runs"), [("approve", RAN, 1), ("reject", WAS_DECLINED, 0)]
)
async def test_an_approval_is_asked_with_the_approval_extension(
    server: str, decision: str, answer: str, runs: int
) -> None:
    STACKER.deleted.clear()
    client = await sdk_client(f"{server}/a2a/stacker", "JSONRPC", streaming=False)
    async with client:
        task = final_task(await collect(client, user_message("tidy up")))
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        metadata = MessageToDict(task.status.message.metadata)
        assert agent_stack.FORM not in metadata
        assert metadata[agent_stack.APPROVAL] == {
            "action": "tool-call",
            "title": "delete_file",
            "description": "Delete a file.",
            "name": "delete_file",
            "input": json.loads(ARGUMENTS),
            "server": None,
        }
        assert task.status.message.parts[0].text == QUESTION  # for a client without it
        assert STACKER.deleted == []
        response = form_response(task, {"decision": decision}, agent_stack.APPROVAL)
        task = final_task(await collect(client, response))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(task).strip() == answer
    assert STACKER.deleted == ["/tmp/notes.txt"] * runs


@pytest.mark.parametrize(("reply", "answer", "runs"), [("yes", RAN, 1), ("no", WAS_DECLINED, 0)])
async def test_an_approval_is_answered_by_text_or_a_one_field_form(
    server: str, reply: str, answer: str, runs: int
) -> None:
    STACKER.deleted.clear()
    client = await sdk_client(f"{server}/a2a/stacker", "JSONRPC", streaming=False)
    async with client:
        task = final_task(await collect(client, user_message("tidy up")))
        values = {"values": {"answer": {"type": "text", "value": reply}}}
        task = final_task(await collect(client, form_response(task, values)))
        assert artifact_text(task).strip() == answer
        task = final_task(
            await collect(client, user_message("tidy up", context_id=task.context_id))
        )
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        text = user_message(reply, task_id=task.id, context_id=task.context_id, message_id=new_id())
        task = final_task(await collect(client, text))
    assert artifact_text(task).strip() == answer
    assert STACKER.deleted == ["/tmp/notes.txt"] * runs * 2


@pytest.mark.parametrize(
    ("uri", "data"),
    [
        (agent_stack.APPROVAL, {"decision": "maybe"}),
        (agent_stack.FORM, {"values": {"answer": "Paris"}}),
        (agent_stack.FORM, {"values": []}),
    ],
)
def test_a_bad_response_is_the_requests_error(
    server: str, uri: str, data: dict[str, object]
) -> None:
    message = {
        "kind": "message",
        "role": "user",
        "messageId": "bad-1",
        "parts": [{"kind": "text", "text": "x"}],
        "metadata": {uri: data},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    response = httpx.post(f"{server}/a2a/asker", json=body)
    error = response.json()["error"]
    assert error["code"] == -32602
    assert uri in error["message"]
    assert httpx.get(f"{server}/a2a/asker/.well-known/agent-card.json").status_code == 200
