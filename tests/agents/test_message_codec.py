import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter
from pydantic_core import PydanticSerializationError

from agenthost.agents import Message
from agenthost.agents.message_codec import decode_messages, encode_json, encode_message
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
HEX_ID = "9d81ef495fb04260b659f906d6751dee"
UUID_ID = "4fbf74d1-f5c1-44c5-89f4-69bc10fb2481"

# Written by the JSON encoder every agenthost before session 16 used (main at 8a261bd,
# agents/message_codec.py): sessions already in Redis hold these bytes.
OLD_ENCODINGS = [
    (
        b'{"role":"user","parts":[{"kind":"text","text":"Could you tell me what the '
        b'weather will be like in Lyon tomorrow morning? "}],'
        b'"id":"9d81ef495fb04260b659f906d6751dee"}',
        Message(
            role="user",
            parts=[
                TextPart(
                    text="Could you tell me what the weather will be like in Lyon "
                    "tomorrow morning? "
                )
            ],
            id=HEX_ID,
        ),
    ),
    (
        b'{"role":"assistant","parts":[{"kind":"text","text":"12 \xc2\xb0C at eight."}]}',
        Message.assistant("12 °C at eight."),
    ),
    (
        b'{"role":"assistant","parts":[{"kind":"text","text":"h\xc3\xa9llo"},{"kind":"data",'
        b'"data":{"a":null,"b":[null,2]},"mime_type":"application/json"},{"kind":"file",'
        b'"mime_type":"image/png"},{"kind":"tool_call","id":"c1","name":"add",'
        b'"arguments":"{\\"a\\": 1}"},{"kind":"tool_result",'
        b'"call_id":"c1","name":"add","content":"2","is_error":true}],"name":"helper",'
        b'"id":"m1","metadata":{"trace":null,"n":[1,null]}}',
        Message(
            role="assistant",
            name="helper",
            id="m1",
            metadata={"trace": None, "n": [1, None]},
            parts=[
                TextPart(text="héllo"),
                DataPart(data={"a": None, "b": [None, 2]}),
                FilePart(mime_type="image/png"),
                ToolCallPart(id="c1", name="add", arguments='{"a": 1}'),
                ToolResultPart(call_id="c1", name="add", content="2", is_error=True),
            ],
        ),
    ),
    (
        b'{"role":"tool","parts":[{"kind":"tool_result","call_id":"call_1","name":"weather",'
        b'"content":"{\\"c\\": 12}","is_error":false}],"metadata":{"protocol":"a2a"}}',
        Message(
            role="tool",
            parts=[ToolResultPart(call_id="call_1", name="weather", content='{"c": 12}')],
            metadata={"protocol": "a2a"},
        ),
    ),
    (  # a null datum kept every null
        b'{"role":"tool","parts":[{"kind":"data","data":null,"mime_type":"application/json"},'
        b'{"kind":"file","url":"u","data":null,"mime_type":null,"name":null}],"name":null,'
        b'"id":null,"metadata":null}',
        Message(role="tool", parts=[DataPart(data=None), FilePart(url="u")]),
    ),
]

SHAPES = [
    EVERY_PART,
    Message.user("hi"),
    Message.system(""),
    Message(role="tool", parts=[DataPart(data=None)]),
    Message(role="user", parts=[TextPart(text="x")], id=HEX_ID),
    Message(role="user", parts=[TextPart(text="x")], id=UUID_ID),
    Message(role="user", parts=[TextPart(text="x")], id=HEX_ID.upper()),  # not packed: JSON
    Message(role="user", parts=[TextPart(text="x")], id="{" + UUID_ID[1:-1] + "}"),
    Message(role="user", parts=[TextPart(text="x")], id=HEX_ID[:-2] + " e"),
    Message(role="user", parts=[TextPart(text="x")], id=""),
    Message(role="user", parts=[]),
    Message(role="user", parts=[TextPart(text="x")], metadata={}),
    Message(role="assistant", parts=[TextPart(text="a"), TextPart(text='b\n"c"\\\x00')]),
    Message(role="assistant", parts=[TextPart(text="a")], name="n", id=UUID_ID),
    Message(role="user", parts=[DataPart(data=[1, 2.5, "x", True], mime_type="text/csv")]),
    Message(role="user", parts=[DataPart(data="text datum"), DataPart(data=None)]),
    Message(role="user", parts=[FilePart()]),
    Message(role="assistant", parts=[ToolCallPart(id="c", name="f")]),
    Message(role="tool", parts=[ToolResultPart(call_id="c", name="f", content="")]),
    Message(role="assistant", parts=[TextPart(text="😀 \u2028 \ud7ff")], metadata={"p": "a2a"}),
]


def test_every_shape_round_trips_and_earlier_readers_read_the_json_ones() -> None:
    raws = [encode_message(m) for m in SHAPES]
    assert decode_messages(raws) == SHAPES
    for message, raw in zip(SHAPES, raws, strict=True):
        assert decode_messages([raw]) == [message]
    assert decode_messages([]) == []
    tagged = [m for m, raw in zip(SHAPES, raws, strict=True) if raw[0] == 1]
    assert tagged == [SHAPES[i] for i in (1, 2, 4, 5)]
    # The rest is JSON, as main wrote it and read it (one validation of the array).
    jsons = [raw for raw in raws if raw[0] != 1]
    assert jsons == [encode_json(m) for m in SHAPES if m not in tagged]
    others = [m for m in SHAPES if m not in tagged]
    assert TypeAdapter(list[Message]).validate_json(b"[" + b",".join(jsons) + b"]") == others


def test_a_text_message_is_its_text_and_a_uuid_id_its_16_bytes() -> None:
    assert encode_message(Message.user("hi")) == b"\x01\x01hi"
    assert encode_message(Message.assistant("12 °C")) == b"\x01\x02" + "12 °C".encode()
    hex_id = encode_message(Message(role="user", parts=[TextPart(text="x")], id=HEX_ID))
    assert hex_id == b"\x01\x05" + bytes.fromhex(HEX_ID) + b"x"
    dashed = encode_message(Message(role="tool", parts=[TextPart(text="x")], id=UUID_ID))
    assert dashed == b"\x01\x0b" + uuid.UUID(UUID_ID).bytes + b"x"
    # A lone surrogate cannot be UTF-8: refused as main's JSON encoder refused it.
    with pytest.raises(PydanticSerializationError, match="surrogates not allowed"):
        encode_message(Message.user("\ud800"))


def test_sessions_stored_before_still_decode_beside_new_messages() -> None:
    olds = [raw for raw, _ in OLD_ENCODINGS]
    expected = [message for _, message in OLD_ENCODINGS]
    assert decode_messages(olds) == expected
    assert [encode_json(m) for m in expected] == olds  # the earlier encoder, unchanged
    # A session stored before and continued after an upgrade: both formats, in order.
    news = [encode_message(m) for m in SHAPES[:3]]
    mixed = [olds[0], news[0], olds[1], olds[2], news[1], news[2], olds[3], olds[4]]
    assert decode_messages(mixed) == [
        expected[0],
        SHAPES[0],
        expected[1],
        expected[2],
        SHAPES[1],
        SHAPES[2],
        expected[3],
        expected[4],
    ]


def test_the_tagged_format_knows_every_field() -> None:
    # A field added to a message or a text part must make encode_message write JSON
    # when it is set (the tagged format keeps only the role, the id and the text).
    assert list(Message.model_fields) == ["role", "parts", "name", "id", "metadata"]
    assert list(TextPart.model_fields) == ["kind", "text"]


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)))
_maybe = st.none() | _text
_parts = st.one_of(
    st.builds(TextPart, text=_text),
    st.builds(DataPart, data=_json, mime_type=st.sampled_from(["application/json", "x/y"])),
    st.builds(FilePart, url=_maybe, data=_maybe, mime_type=_maybe, name=_maybe),
    st.builds(ToolCallPart, id=_text, name=_text, arguments=st.sampled_from(["{}", '{"a":1}'])),
    st.builds(ToolResultPart, call_id=_text, name=_text, content=_text, is_error=st.booleans()),
)
_ids = st.none() | _text | st.uuids().map(str) | st.uuids().map(lambda u: u.hex)
_messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    parts=st.lists(_parts, max_size=4),
    name=_maybe,
    id=_ids,
    metadata=st.none() | st.dictionaries(st.text(), _json, max_size=3),
)
_text_messages = st.builds(  # what the tagged format holds, rarely drawn above
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    parts=st.tuples(st.builds(TextPart, text=_text)).map(list),
    id=_ids,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_messages | _text_messages, max_size=5),
    st.lists(st.booleans(), min_size=5, max_size=5),
)
def test_any_messages_round_trip_in_either_format(messages: list[Message], old: list[bool]) -> None:
    raws = [
        encode_json(m) if was_old else encode_message(m)
        for m, was_old in zip(messages, old, strict=False)
    ]
    assert decode_messages(raws) == messages
