"""The Responses API through the official openai SDK, in-process."""

import anyio
import openai
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from tests.adapters.openai.clients import openai_client

pytestmark = pytest.mark.anyio


def transcript_model(request: ModelRequest) -> str:
    """Answers with everything it was sent, so tests can see the context."""
    return " | ".join(f"{m.role}:{m.text}" for m in request.messages)


def agents() -> dict[str, Agent]:
    return {
        "echo": ChatAgent("echo", EchoModel()),
        "history": ChatAgent("history", FunctionModel(transcript_model), instructions="Agent."),
    }


async def test_create_retrieve_and_delete() -> None:
    async with openai_client(agents()) as client:
        response = await client.responses.create(model="echo", input="hello responses")
        assert response.output_text == "hello responses"
        assert response.status == "completed"
        assert response.id.startswith("resp_") and response.output[0].id.startswith("msg_")
        assert response.usage is not None and response.usage.output_tokens == 2
        fetched = await client.responses.retrieve(response.id)
        assert fetched.output_text == "hello responses"
        await client.responses.delete(response.id)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(response.id)
        with pytest.raises(openai.NotFoundError):
            await client.responses.delete(response.id)


async def test_previous_response_id_continues_without_inheriting_instructions() -> None:
    async with openai_client(agents()) as client:
        first = await client.responses.create(
            model="history", input="one", instructions="Be terse."
        )
        assert first.output_text == "system:Agent.\n\nBe terse. | user:one"
        second = await client.responses.create(
            model="history", input="two", previous_response_id=first.id
        )
    assert second.output_text == (
        f"system:Agent. | user:one | assistant:{first.output_text} | user:two"
    )
    assert second.previous_response_id == first.id


async def test_store_false_stores_nothing() -> None:
    async with openai_client(agents()) as client:
        response = await client.responses.create(model="echo", input="secret", store=False)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(response.id)
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(model="echo", input="x", previous_response_id=response.id)
    assert caught.value.code == "previous_response_not_found"


async def test_unknown_previous_response_is_400() -> None:
    async with openai_client(agents()) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(model="echo", input="x", previous_response_id="resp_nope")
    assert caught.value.code == "previous_response_not_found"
    assert caught.value.param == "previous_response_id"


async def test_a_conversation_keeps_its_history() -> None:
    async with openai_client(agents()) as client:
        c1 = await client.conversations.create()
        c2 = await client.conversations.create()
        await client.responses.create(model="history", input="a", conversation=c1.id)
        second = await client.responses.create(model="history", input="b", conversation=c1.id)
        other = await client.responses.create(model="history", input="z", conversation=c2.id)
    assert second.output_text.startswith("system:Agent. | user:a | assistant:")
    assert second.output_text.endswith("| user:b")
    assert other.output_text == "system:Agent. | user:z"


async def test_the_stream_helper_gets_every_event_in_order() -> None:
    async with openai_client(agents()) as client:
        async with client.responses.stream(model="echo", input="stream this text") as stream:
            events = [event async for event in stream]
            final = await stream.get_final_response()
        assert [e.sequence_number for e in events] == list(range(len(events)))
        types = [e.type for e in events]
        assert types[:4] == [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
        ]
        assert types.count("response.output_text.delta") == 3
        assert types[-4:] == [
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
        assert final.output_text == "stream this text"
        # A streamed response is stored and can be continued.
        follow = await client.responses.create(
            model="echo", input="next", previous_response_id=final.id
        )
        assert follow.output_text == "next"


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"tools": [{"type": "web_search"}]}, "tools[0].type"),
        ({"text": {"format": {"type": "json_object"}}}, "text.format"),
        ({"previous_response_id": "resp_x", "conversation": "c"}, "conversation"),
        ({"input": [{"type": "item_reference", "id": "msg_x"}]}, "input"),
        ({"input": [{"type": "item_reference"}]}, "input[0].id"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
    ],
)
async def test_bad_requests_name_the_param(extra: dict[str, object], param: str) -> None:
    body: dict[str, object] = {"model": "echo", "input": "x", **extra}
    async with openai_client(agents()) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(**body)  # type: ignore[call-overload]
    assert caught.value.param == param


async def test_fifty_concurrent_streamed_conversations_do_not_cross_talk() -> None:
    results: dict[int, str] = {}

    async def conversation(client: openai.AsyncOpenAI, n: int) -> None:
        first = await client.responses.create(model="history", input=f"I am {n}")
        async with client.responses.stream(
            model="history", input=f"who am I? ({n})", previous_response_id=first.id
        ) as stream:
            async for _ in stream:
                pass
            results[n] = (await stream.get_final_response()).output_text

    async with openai_client(agents()) as client:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for n in range(50):
                    group.start_soon(conversation, client, n)
    assert len(results) == 50
    for n, text in results.items():
        assert text.startswith(f"system:Agent. | user:I am {n} | assistant:")
        assert text.endswith(f"user:who am I? ({n})")
        others = [m for m in range(50) if m != n and f"I am {m} " in text + " "]
        assert others == []
