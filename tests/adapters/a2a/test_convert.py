"""The pure A2A ↔ runtime part mapping."""

from __future__ import annotations

import orjson
import pytest
from a2a.types import Part
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError
from google.protobuf.json_format import ParseDict
from google.protobuf.struct_pb2 import Value

from agenthost.adapters.a2a import convert
from agenthost.agents import DataPart, FilePart, Message, RunResult, TextPart


def test_images_go_to_the_model_by_url_or_inline() -> None:
    by_url = convert.from_part(Part(url="https://x/cat.png", media_type="image/png"))
    assert by_url == FilePart(url="https://x/cat.png", mime_type="image/png")
    inline = convert.from_part(Part(raw=b"\x89PNG", media_type="image/png", filename="a.png"))
    assert inline == FilePart(data="iVBORw==", mime_type="image/png", name="a.png")


def test_data_is_json_text_and_other_files_or_empty_parts_are_refused() -> None:
    data = Part(data=ParseDict({"a": [1, 2.5], "b": "c"}, Value()))
    text = convert.from_part(data)
    assert isinstance(text, TextPart)  # a Struct's key order is not kept: compare values
    assert orjson.loads(text.text) == {"a": [1, 2.5], "b": "c"} and "1.0" not in text.text
    with pytest.raises(ContentTypeNotSupportedError, match="unknown"):
        convert.from_part(Part(raw=b"x"))
    with pytest.raises(InvalidParamsError):
        convert.from_part(Part())
    with pytest.raises(InvalidParamsError, match="no parts"):
        convert.from_parts([])


def test_answers_keep_their_data_and_files_and_drop_tool_calls() -> None:
    answer = Message(
        role="assistant",
        parts=[
            TextPart(text="streamed already"),
            DataPart(data={"k": "v"}),
            FilePart(url="https://x/out.txt", mime_type="text/plain", name="out.txt"),
            FilePart(data="dGNr", mime_type="text/plain"),
        ],
    )
    parts = convert.output_parts(RunResult("streamed already", [Message.user("q"), answer]))
    assert [p.WhichOneof("content") for p in parts] == ["data", "url", "raw"]
    assert parts[2].raw == b"tck" and parts[1].filename == "out.txt"
    assert convert.output_parts(RunResult("", [Message.user("q")])) == []
