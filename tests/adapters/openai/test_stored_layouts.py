"""A Redis holding what earlier versions stored keeps working (``adapters/openai/store.py``).

Before chains, each stored response was an entry of its own (its turn in the
field ``turn``, its parent a link to another entry); before packed chunks, a
conversation kept its items as one JSON text each (``items``). Both are
written here as they were, straight into the Redis the app uses, and then
read, continued and changed through the SDK. (A packed text was latin-1 then,
base64 now in Redis: :func:`~agenthost.adapters.openai.store.unpack` reads both.)
"""

from __future__ import annotations

import orjson
import pytest

from agenthost.adapters.openai.items import message_item
from agenthost.adapters.openai.store import pack, unpack
from agenthost.agents import ChatAgent, SessionKey
from agenthost.agents.sessions import ANONYMOUS
from agenthost.app.redis_memory import RedisMemoryManager, redis_client
from agenthost.app.settings import Settings
from tests.adapters.openai.clients import openai_client
from tests.principals import transcript_model
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio


def store(url: str, namespace: str) -> RedisMemoryManager:
    return RedisMemoryManager(redis_client(url, timeout=2), namespace, ttl=60)


async def test_responses_and_conversations_stored_before_keep_working(
    redis: RedisServer,  # noqa: F811
) -> None:
    agents = {"t": ChatAgent("t", transcript_model())}
    responses, conversations = store(redis.url, "openai"), store(redis.url, "openai-conversations")
    async with openai_client(agents, Settings(session_store=redis.url)) as client:
        # Two chains of one response each: the same entries as before chains ...
        first = await client.responses.create(model="t", input="one")
        second = await client.responses.create(model="t", input="two")
        # ... linked as the layout before chains linked a chain's turns: entry to entry.
        key = SessionKey("responses", second.id, ANONYMOUS)
        stored = await responses.get(key)
        assert stored is not None and set(stored.meta) == {"turn"}
        turn = unpack(stored.meta["turn"])
        await responses.append(key, (), meta={"turn": pack({**turn, "parent": first.id})})
        assert (await client.responses.retrieve(second.id)).previous_response_id == first.id

        third = await client.responses.create(
            model="t", input="three", previous_response_id=second.id
        )
        assert third.output_text == "one | one | two | two | three"
        assert third.id.startswith(second.id + "x")  # a turn of the old entry's chain
        fourth = await client.responses.create(
            model="t", input="four", previous_response_id=third.id
        )
        assert fourth.output_text.endswith("two | three | " + third.output_text + " | four")
        kept = await responses.get(key)
        assert kept is not None and len(kept.meta) == 3  # second, third and fourth
        # In Redis a turn is base64 (ASCII); the one written as before, latin-1, still reads.
        assert kept.meta[third.id.rpartition("x")[2]].isascii()
        assert not kept.meta["turn"].isascii()
        await client.responses.delete(second.id)
        with pytest.raises(Exception, match="earlier turn"):
            await client.responses.create(model="t", input="five", previous_response_id=fourth.id)

        # A conversation with its items as JSON texts, one each.
        made = await client.conversations.create(metadata={"topic": "old"})
        user = {
            "type": "message",
            "id": "msg_old0",
            "role": "user",
            "status": "completed",
            "content": [{"type": "input_text", "text": "I am Ada."}],
        }
        items = [user, message_item("msg_old1", "Hello Ada.")]
        resource = await conversations.get(SessionKey("conversations", made.id, ANONYMOUS))
        assert resource is not None
        old = {
            "conversation": resource.meta["conversation"],
            "items": [orjson.dumps(i).decode() for i in items],
        }
        conversation_key = SessionKey("conversations", made.id, ANONYMOUS)
        await conversations.delete(conversation_key)
        await conversations.append(conversation_key, (), meta=old)

        listed = await client.conversations.items.list(made.id, order="asc")
        assert [i.id for i in listed.data] == ["msg_old0", "msg_old1"]
        answer = await client.responses.create(model="t", input="Who am I?", conversation=made.id)
        assert answer.output_text == "I am Ada. | Hello Ada. | Who am I?"
        listed = await client.conversations.items.list(made.id, order="asc")
        texts = [i.content[0].text for i in listed.data]  # type: ignore[union-attr]
        assert texts == ["I am Ada.", "Hello Ada.", "Who am I?", answer.output_text]
        rewritten = await conversations.get(conversation_key)
        assert rewritten is not None and rewritten.meta["items"] == []  # now packed
        assert len(rewritten.meta["packed"]) == 2
        await client.conversations.items.delete("msg_old0", conversation_id=made.id)
        listed = await client.conversations.items.list(made.id, order="asc")
        assert [i.content[0].text for i in listed.data] == texts[1:]  # type: ignore[union-attr]
        assert (await client.conversations.retrieve(made.id)).metadata == {"topic": "old"}
    await responses.aclose()
    await conversations.aclose()
