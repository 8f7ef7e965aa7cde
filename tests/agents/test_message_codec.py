from agenthost.agents import Message
from agenthost.agents.message_codec import decode_messages, encode_message
from agenthost.agents.messages import DataPart, FilePart, TextPart, ToolCallPart, ToolResultPart

EVERY_PART = Message(
    role="assistant",
    name="helper",
    id="m1",
    metadata={"trace": None, "n": [1, None]},
    parts=[
        TextPart(text="héllo"),
        DataPart(data={"a": None, "b": [None, 2]}),
        FilePart(url="https://example.com/f.png", mime_type="image/png"),
        FilePart(data="aGk=", name="hi.txt"),
        ToolCallPart(id="c1", name="add", arguments='{"a": 1}'),
        ToolResultPart(call_id="c1", name="add", content="2", is_error=True),
    ],
)


def test_every_part_kind_round_trips_and_nulls_are_left_out() -> None:
    messages = [EVERY_PART, Message.user("hi"), Message(role="tool", parts=[DataPart(data=None)])]
    raws = [encode_message(m) for m in messages]
    assert decode_messages(raws) == messages
    assert raws[1] == b'{"role":"user","parts":[{"kind":"text","text":"hi"}]}'
    assert decode_messages([]) == []
