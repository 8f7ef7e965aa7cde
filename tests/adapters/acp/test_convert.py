"""The pure mappings of the ACP adapter, and the bounds of its run store."""

import asyncio

import pytest
from acp_sdk.models import Message, MessagePart, Run

from agenthost.adapters.acp.convert import from_acp_messages, question_message, to_history
from agenthost.adapters.acp.runs import RunRecord, RunStore
from agenthost.agents import DataPart, FilePart, SessionKey, TextPart, ToolCallPart, UserError
from agenthost.agents import Message as AgentMessage


def test_acp_parts_become_text_data_and_files() -> None:
    message = Message(
        parts=[
            MessagePart(content="hello"),
            MessagePart(content='{"a": 1}', content_type="application/json"),
            MessagePart(content="aGk=", content_encoding="base64", content_type="image/png"),
            MessagePart(content_url="https://example.com/a.pdf", content_type="application/pdf"),
        ]
    )
    [converted] = from_acp_messages([message])
    assert converted.role == "user"
    text, data, inline, linked = converted.parts
    assert text == TextPart(text="hello")
    assert isinstance(data, DataPart) and data.data == {"a": 1}
    assert isinstance(inline, FilePart) and (inline.data, inline.mime_type) == ("aGk=", "image/png")
    assert isinstance(linked, FilePart) and linked.url == "https://example.com/a.pdf"


def test_agent_messages_are_the_assistants_and_empty_input_is_refused() -> None:
    messages = [Message(role="agent/echo", parts=[MessagePart(content="earlier")])]
    assert from_acp_messages(messages)[0].role == "assistant"
    with pytest.raises(UserError, match="no content"):
        from_acp_messages([Message(parts=[MessagePart(content=None)])])


def test_history_keeps_user_and_agent_text_only() -> None:
    call = ToolCallPart(id="c1", name="calculator", arguments="{}")
    messages = [
        AgentMessage.user("hi"),
        AgentMessage(role="assistant", parts=[call]),
        AgentMessage.assistant("hello"),
    ]
    history = to_history("echo", messages)
    assert [(m.role, str(m)) for m in history] == [("user", "hi"), ("agent/echo", "hello")]


def test_a_question_that_is_not_ask_user_still_says_what_is_awaited() -> None:
    call = ToolCallPart(id="c1", name="get_weather", arguments='{"city": "Oslo"}')
    assert str(question_message("a", [call])) == 'get_weather({"city": "Oslo"})'


def _record(principal: str = "anonymous") -> RunRecord:
    run = Run(agent_name="echo")
    return RunRecord(run, principal, SessionKey("echo", "s", principal))


@pytest.mark.anyio
async def test_the_run_store_drops_idle_runs_by_count_and_age_but_never_busy_ones() -> None:
    store = RunStore(max_runs=2, ttl=60)
    busy = _record()
    busy.task = asyncio.create_task(asyncio.sleep(10))
    store.add(busy)
    idle = [_record() for _ in range(3)]
    for record in idle:
        store.add(record)
    # Two idle runs fit; the oldest went, the busy one stayed.
    assert store.get("anonymous", str(idle[0].run.run_id)) is None
    assert store.get("anonymous", str(idle[2].run.run_id)) is idle[2]
    assert store.get("anonymous", str(busy.run.run_id)) is busy
    assert store.get("someone-else", str(busy.run.run_id)) is None
    idle[2].idle_since -= 61
    assert store.get("anonymous", str(idle[2].run.run_id)) is None
    busy.task.cancel()
    await asyncio.wait([busy.task])


def test_the_run_store_drops_the_oldest_idle_runs_past_its_byte_budget() -> None:
    from acp_sdk.models import Message, MessageCreatedEvent, MessagePart

    store = RunStore(max_runs=100, ttl=60, max_bytes=31_000)
    records = [_record() for _ in range(4)]
    for record in records:
        store.add(record)
        part = MessagePart(content="x" * 10_000, content_type="text/plain")
        record.emit(MessageCreatedEvent(message=Message(parts=[part])))
    store.add(_record())  # adding prunes: ~41,000 bytes of runs against 31,000
    assert store.get("anonymous", str(records[0].run.run_id)) is None
    assert store.get("anonymous", str(records[1].run.run_id)) is records[1]
    assert store.held_bytes <= 31_000
    assert store.evictions == 1
