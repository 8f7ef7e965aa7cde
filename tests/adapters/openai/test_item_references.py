"""``item_reference`` input items, sent as the Vercel AI SDK sends them, through the openai SDK.

The AI SDK's Responses provider stores responses by default and, on the
second ``useChat`` turn, replays the assistant's earlier answer (and tool
calls) as ``{"type": "item_reference", "id": ...}`` with no
``previous_response_id``: the ids are the ones the first response handed out.
"""

from typing import Any

import httpx
import openai
import pytest

from agenthost.agents import Agent, ChatAgent, ToolCallPart
from agenthost.agents.models import FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.testing import call
from tests.adapters.openai.clients import openai_client, running
from tests.principals import bearer, keyed_settings

pytestmark = pytest.mark.anyio


def seen(request: ModelRequest) -> str:
    """Everything the model was sent, so the test sees what the references became."""
    return " | ".join(f"{m.role}:{m.text}" for m in request.messages)


def agents() -> dict[str, Agent]:
    return {"t": ChatAgent("t", FunctionModel(seen))}


def user(text: str) -> dict[str, Any]:
    # The AI SDK's user message: a role and input_text parts, no "type", no id.
    return {"role": "user", "content": [{"type": "input_text", "text": text}]}


async def test_the_ai_sdk_second_use_chat_turn() -> None:
    async with openai_client(agents()) as client:
        first = await client.responses.create(model="t", input=[user("hi")])  # type: ignore[list-item]
        message = first.output[0].id
        second = await client.responses.create(
            model="t",
            input=[user("hi"), {"type": "item_reference", "id": message}, user("again")],  # type: ignore[list-item]
        )
        assert second.output_text == "user:hi | assistant:user:hi | user:again"
        # The resolved item is this turn's input, as stored.
        listed = await client.responses.input_items.list(second.id, order="asc")
        assert [i.id for i in listed.data][1] == message
        # A reference to an input item the server named resolves too.
        first_input = (await client.responses.input_items.list(first.id)).data[0].id
        third = await client.responses.create(
            model="t", input=[{"type": "item_reference", "id": first_input}]
        )
        assert third.output_text == "user:hi"


async def test_function_calls_are_referenced_and_answered() -> None:
    model = ScriptedModel([call("lookup", '{"q": "x"}'), "done"])
    tool = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    async with openai_client({"a": ChatAgent("a", model)}) as client:
        first = await client.responses.create(model="a", input="find x", tools=[tool])  # type: ignore[list-item]
        made = first.output[-1]
        assert made.type == "function_call"
        second = await client.responses.create(
            model="a",
            tools=[tool],  # type: ignore[list-item]
            input=[
                user("find x"),
                {"type": "item_reference", "id": made.id},
                {"type": "function_call_output", "call_id": made.call_id, "output": "42"},
            ],
        )
    assert second.output_text == "done"
    sent = model.requests[1].messages
    assert [m.role for m in sent] == ["user", "assistant", "tool"]
    assert isinstance(sent[1].parts[0], ToolCallPart) and sent[1].parts[0].id == made.call_id


async def test_unknown_unstored_and_other_keys_ids_are_400_naming_the_id() -> None:
    async with running(agents(), keyed_settings()) as (_, http):
        made = await _post(http, "alice", {"model": "t", "input": "mine"})
        unstored = await _post(http, "alice", {"model": "t", "input": "x", "store": False})
        for principal, id in [
            ("bob", made["output"][0]["id"]),
            ("alice", unstored["output"][0]["id"]),
            ("alice", "msg_nothing"),
            ("alice", "nothing"),
        ]:
            body = {"model": "t", "input": [{"type": "item_reference", "id": id}]}
            answer = await http.post("/v1/responses", json=body, headers=bearer(principal))
            assert answer.status_code == 400, answer.text
            error = answer.json()["error"]
            assert error["param"] == "input" and id in error["message"]
        # Its maker still can.
        body = {"model": "t", "input": [{"type": "item_reference", "id": made["output"][0]["id"]}]}
        assert (await _post(http, "alice", body))["output"][0]["content"][0]["text"] == (
            "assistant:user:mine"
        )


async def test_conversation_items_are_referenced() -> None:
    async with openai_client(agents()) as client:
        conversation = await client.conversations.create(items=[user("kept")])  # type: ignore[list-item]
        items = await client.conversations.items.list(conversation.id)
        answer = await client.responses.create(
            model="t",
            conversation=conversation.id,
            input=[{"type": "item_reference", "id": items.data[0].id}, user("next")],
        )
        assert answer.output_text == "user:kept | user:kept | user:next"
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(
                model="t", input=[{"type": "item_reference", "id": items.data[0].id}]
            )
    assert caught.value.param == "input"


async def _post(http: httpx.AsyncClient, principal: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = await http.post("/v1/responses", json=body, headers=bearer(principal))
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result
