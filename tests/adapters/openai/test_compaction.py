"""``POST /v1/responses/compact`` with the openai SDK's ``responses.compact()``.

The app runs under uvicorn with two API keys; the ``relay`` agent's model is
the real HTTP fake of an OpenAI-compatible upstream (:mod:`tests.upstream`),
which records what it is sent, so a test sees the summary reach it in place
of the history.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from agenthost.adapters.openai.compaction import decode, encode
from agenthost.agents import Agent, ChatAgent
from agenthost.agents.history import SUMMARIZE_INSTRUCTIONS, SUMMARY_HEADING
from agenthost.agents.models import EchoModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from tests.principals import KEYS, keyed_settings
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.anyio

UPSTREAM = FakeUpstream()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serve_in_thread(UPSTREAM.app) as upstream:
        model = OpenAIModel("up", base_url=f"{upstream}/v1", api_key="k", max_retries=0)
        agents: dict[str, Agent] = {
            "relay": ChatAgent("relay", model),
            "echo": ChatAgent("echo", EchoModel()),
        }
        with serve_in_thread(create_app(keyed_settings(), agents), lifespan=True) as url:
            yield url


def client(url: str, principal: str = "alice") -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=KEYS[principal], max_retries=0)


def as_input(items: list[Any]) -> list[Any]:
    """Output items as the next request's input items (what a client sends back).

    The SDK types every output ``message`` as the assistant's (``output_text`` parts);
    a compacted user message has ``input_text`` parts, as with OpenAI, hence no warnings.
    """
    return [item.model_dump(exclude_none=True, warnings=False) for item in items]


def last_upstream_messages() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = UPSTREAM.requests[-1]["messages"]
    return messages


async def test_a_compacted_conversation_replaces_the_history(server: str) -> None:
    async with client(server) as sdk:
        first = await sdk.responses.create(model="relay", input="my name is Ada")
        second = await sdk.responses.create(
            model="relay", input="I live in Paris", previous_response_id=first.id
        )
        compacted = await sdk.responses.compact(model="relay", previous_response_id=second.id)

        # The agent's model summarised the transcript, told how, with no tool to call.
        summarising = UPSTREAM.requests[-1]
        assert "tool_choice" not in summarising and summarising["temperature"] == 0
        system, prompt = summarising["messages"]
        assert system["role"] == "system" and SUMMARIZE_INSTRUCTIONS in system["content"]
        assert prompt["content"] == (
            "user: my name is Ada\nassistant: upstream says: my name is Ada\n"
            "user: I live in Paris\nassistant: upstream says: I live in Paris"
        )
        # The SDK's CompactedResponse: the user messages as they were, then one compaction.
        assert compacted.object == "response.compaction"
        assert [item.type for item in compacted.output] == ["message", "message", "compaction"]
        user_texts = [item.content[0].text for item in compacted.output[:2]]  # type: ignore[union-attr]
        assert user_texts == ["my name is Ada", "I live in Paris"]
        item: Any = compacted.output[2]
        summary = decode(item.encrypted_content, param="")
        assert summary == "upstream says: " + prompt["content"]
        assert item.id.startswith("cmp_")
        assert compacted.usage.input_tokens > 0 and compacted.usage.output_tokens > 0

        # The next request carries the compacted items: the upstream gets the summary, not
        # the earlier answers.
        third = await sdk.responses.create(
            model="relay",
            input=[*as_input(compacted.output), {"role": "user", "content": "where do I live?"}],
        )
        assert third.output_text == "upstream says: where do I live?"
        sent = last_upstream_messages()
        assert [m["role"] for m in sent] == ["user", "user", "user", "user"]
        assert sent[2]["content"] == f"{SUMMARY_HEADING}\n{summary}"
        assert [m["content"] for m in (sent[0], sent[1], sent[3])] == [
            "my name is Ada",
            "I live in Paris",
            "where do I live?",
        ]

        # Stored as that response's input (alice's): a chain from it sees the summary too.
        listed = await sdk.responses.input_items.list(third.id, order="asc")
        stored: Any = listed.data[2]
        assert stored.type == "compaction" and stored.encrypted_content == item.encrypted_content
        await sdk.responses.create(
            model="relay", input="and my name?", previous_response_id=third.id
        )
        assert f"{SUMMARY_HEADING}\n{summary}" in [m["content"] for m in last_upstream_messages()]

        # Compacting again folds the earlier summary into the new one.
        again = await sdk.responses.compact(
            model="relay",
            input=[*as_input(compacted.output), {"role": "user", "content": "one more"}],
        )
        assert [i.type for i in again.output] == ["message", "message", "message", "compaction"]
        assert f"user: {SUMMARY_HEADING}\n{summary}" in last_upstream_messages()[1]["content"]


async def test_echo_compacts_to_the_transcript_itself(server: str) -> None:
    async with client(server) as sdk:
        compacted = await sdk.responses.compact(
            model="echo",
            instructions="be brief",
            input=[
                {"role": "user", "content": "hello"},
                {"role": "assistant", "content": "hi, Ada"},
            ],
        )
    item: Any = compacted.output[-1]
    assert decode(item.encrypted_content, param="") == (
        "system: be brief\nuser: hello\nassistant: hi, Ada"
    )


async def test_another_key_cannot_compact_or_reference_a_stored_response(server: str) -> None:
    async with client(server, "alice") as alice, client(server, "bob") as bob:
        mine = await alice.responses.create(model="relay", input="my card is 4111")
        with pytest.raises(openai.BadRequestError) as by_id:
            await bob.responses.compact(model="relay", previous_response_id=mine.id)
        assert by_id.value.code == "previous_response_not_found"
        with pytest.raises(openai.BadRequestError) as by_reference:
            await bob.responses.compact(
                model="relay", input=[{"type": "item_reference", "id": mine.output[0].id}]
            )
        assert by_reference.value.code == "item_not_found"
        # The owner can.
        compacted = await alice.responses.compact(model="relay", previous_response_id=mine.id)
    assert "4111" in decode(compacted.output[-1].encrypted_content, param="")  # type: ignore[union-attr]


FOREIGN = {"type": "compaction", "encrypted_content": "gAAAAABo-openai-ciphertext"}


@pytest.mark.parametrize(
    ("path", "body", "status", "code", "param"),
    [
        ("compact", {"model": "relay"}, 400, "invalid_value", "input"),
        ("compact", {"model": "relay", "input": []}, 400, "invalid_value", "input"),
        ("compact", {"model": "nobody", "input": "hi"}, 404, "model_not_found", "model"),
        ("compact", {"model": "relay", "input": 5}, 400, "invalid_value", "input"),
        ("compact", {"input": "hi"}, 400, "invalid_value", "model"),
        ("compact", {"model": "relay", "previous_response_id": "resp_missing"}, 400,
         "previous_response_not_found", "previous_response_id"),
        ("compact", {"model": "relay", "input": [FOREIGN]}, 400, "invalid_encrypted_content",
         "input[0].encrypted_content"),
        ("responses", {"model": "relay", "input": [FOREIGN]}, 400, "invalid_encrypted_content",
         "input[0].encrypted_content"),
        ("responses", {"model": "relay", "input": [{"type": "compaction"}]}, 400,
         "invalid_value", "input[0].encrypted_content"),
        ("responses", {"model": "relay", "input": [
            {"type": "compaction", "encrypted_content": encode("x")[:-3] + "%%%"}]}, 400,
         "invalid_encrypted_content", "input[0].encrypted_content"),
    ],
)  # fmt: skip
async def test_bad_input_is_a_4xx_in_the_openai_envelope(
    server: str, path: str, body: dict[str, Any], status: int, code: str, param: str
) -> None:
    url = f"{server}/v1/responses" + ("/compact" if path == "compact" else "")
    headers = {"Authorization": f"Bearer {KEYS['alice']}"}
    async with httpx.AsyncClient() as http:
        answer = await http.post(url, json=body, headers=headers)
        assert answer.status_code == status, answer.text
        error = answer.json()["error"]
        assert (error["code"], error["param"]) == (code, param)
        assert error["message"]
        not_json = await http.post(
            f"{server}/v1/responses/compact",
            content=b"{not json",
            headers={**headers, "content-type": "application/json"},
        )
    assert not_json.status_code == 400 and not_json.json()["error"]["code"] == "invalid_json"
