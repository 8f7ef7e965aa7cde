"""The Conversations API and stored-response chains, with the official SDK.

State is bounded and honest: conversations have a store of their own, and
continuing what was evicted or expired is an error, never an empty history.
"""

from typing import Any

import anyio
import openai
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.settings import Settings
from tests.adapters.openai.clients import openai_client
from tests.principals import transcript_model

pytestmark = pytest.mark.anyio


def agents() -> dict[str, Agent]:
    return {"t": ChatAgent("t", transcript_model()), "echo": ChatAgent("echo", EchoModel())}


async def test_a_conversation_with_its_items() -> None:
    async with openai_client(agents()) as client:
        made = await client.conversations.create(
            items=[{"type": "message", "role": "user", "content": "I am Ada."}],
            metadata={"topic": "intro"},
        )
        assert made.id.startswith("conv_") and made.metadata == {"topic": "intro"}
        answer = await client.responses.create(model="t", input="Who am I?", conversation=made.id)
        assert answer.output_text == "I am Ada. | Who am I?"
        assert answer.conversation is not None and answer.conversation.id == made.id
        items = await client.conversations.items.list(made.id, order="asc")
        texts = [item.content[0].text for item in items.data]  # type: ignore[union-attr]
        assert texts == ["I am Ada.", "Who am I?", "I am Ada. | Who am I?"]
        added = await client.conversations.items.create(
            made.id, items=[{"type": "message", "role": "user", "content": "Also: Paris."}]
        )
        one = await client.conversations.items.retrieve(added.data[0].id, conversation_id=made.id)
        assert one.id == added.data[0].id
        await client.conversations.items.delete(
            texts_id := items.data[0].id, conversation_id=made.id
        )
        left = await client.conversations.items.list(made.id, order="asc")
        assert texts_id not in [i.id for i in left.data] and len(left.data) == 3
        updated = await client.conversations.update(made.id, metadata={"topic": "travel"})
        assert (await client.conversations.retrieve(made.id)).metadata == updated.metadata
        deleted = await client.conversations.delete(made.id)
        assert deleted.deleted and deleted.id == made.id
        with pytest.raises(openai.NotFoundError):
            await client.conversations.retrieve(made.id)


async def test_items_are_listed_a_page_at_a_time() -> None:
    async with openai_client(agents()) as client:
        items: Any = [{"type": "message", "role": "user", "content": str(n)} for n in range(5)]
        made = await client.conversations.create(items=items)
        first = await client.conversations.items.list(made.id, limit=2, order="asc")
        assert [i.content[0].text for i in first.data] == ["0", "1"]  # type: ignore[union-attr]
        assert first.has_more and first.last_id == first.data[-1].id
        every = [i.id async for i in client.conversations.items.list(made.id, limit=2)]
        assert len(every) == 5
        with pytest.raises(openai.BadRequestError):
            await client.conversations.items.list(made.id, limit=500)


async def test_an_unknown_or_bare_conversation_is_a_404_not_an_empty_history() -> None:
    async with openai_client(agents()) as client:
        for name in ("support", "conv_0000"):
            with pytest.raises(openai.NotFoundError) as missing:
                await client.responses.create(model="t", input="hi", conversation=name)
            assert missing.value.code == "conversation_not_found"
            # A bare name was perhaps another protocol's session: the 404 says how to share.
            shared_hint = "AGENTHOST_SESSIONS=shared" in missing.value.message
            assert shared_hint == (name == "support"), missing.value.message


async def test_an_evicted_conversation_is_an_error_and_responses_do_not_evict_it() -> None:
    async with openai_client(agents(), Settings(session_max=3)) as client:
        kept = await client.conversations.create()
        for n in range(5):  # unrelated stored responses live in their own store
            await client.responses.create(model="echo", input=f"unrelated {n}")
        await client.responses.create(model="t", input="still here", conversation=kept.id)
        for _ in range(3):
            await client.conversations.create()
        with pytest.raises(openai.NotFoundError) as evicted:
            await client.responses.create(model="t", input="and now?", conversation=kept.id)
        assert "expired" in evicted.value.message


async def test_a_chain_stores_each_turn_once_and_rebuilds_the_transcript() -> None:
    async with openai_client(agents()) as client:
        previous = None
        for word in ("one", "two", "three"):
            answer = await client.responses.create(
                model="t", input=word, previous_response_id=previous
            )
            previous = answer.id
        # user one, its answer "one", user two, its answer "one | one | two", user three.
        assert answer.output_text == "one | one | two | one | one | two | three"
        items = await client.responses.input_items.list(answer.id)
        assert [i.content[0].text for i in items.data] == ["three"]  # type: ignore[union-attr]
        again = await client.responses.retrieve(answer.id)
        assert again.output_text == answer.output_text and again.usage == answer.usage


async def test_a_chain_whose_earlier_turn_was_deleted_cannot_be_continued() -> None:
    async with openai_client(agents()) as client:
        first = await client.responses.create(model="t", input="one")
        second = await client.responses.create(
            model="t", input="two", previous_response_id=first.id
        )
        await client.responses.delete(first.id)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(first.id)
        assert (await client.responses.retrieve(second.id)).output_text == second.output_text
        with pytest.raises(openai.BadRequestError) as lost:
            await client.responses.create(model="t", input="three", previous_response_id=second.id)
        assert lost.value.code == "previous_response_not_found"
        assert first.id in lost.value.message and "earlier turn" in lost.value.message


async def test_an_evicted_chain_cannot_be_continued() -> None:
    # A chain is one entry of the store (bench/protocol_sessions.py): it goes whole.
    async with openai_client(agents(), Settings(session_max=2)) as client:
        first = await client.responses.create(model="t", input="one")
        second = await client.responses.create(
            model="t", input="two", previous_response_id=first.id
        )
        await client.responses.create(model="echo", input="a second chain")
        await client.responses.create(model="echo", input="pushes the first chain out")
        with pytest.raises(openai.BadRequestError) as lost:
            await client.responses.create(model="t", input="three", previous_response_id=second.id)
        assert lost.value.code == "previous_response_not_found"
        assert second.id in lost.value.message


@pytest.mark.slow
async def test_the_ttl_is_idle_time_reading_keeps_a_conversation() -> None:
    async with openai_client(agents(), Settings(session_ttl=1.5)) as client:
        kept = await client.conversations.create()
        idle = await client.conversations.create()
        for _ in range(6):  # 1.8 s of reads, each well within the TTL
            await anyio.sleep(0.3)
            await client.conversations.retrieve(kept.id)
        assert (await client.conversations.retrieve(kept.id)).id == kept.id
        with pytest.raises(openai.NotFoundError):
            await client.conversations.retrieve(idle.id)
