"""The pure mappings: annotations, pending questions, argument errors, throttled progress."""

from __future__ import annotations

import base64

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextResourceContents,
)

from agenthost.adapters.mcp import convert
from agenthost.adapters.mcp.errors import error_result
from agenthost.adapters.mcp.progress import ThrottledProgress
from agenthost.agents import ASK_USER, ChatAgent, FilePart, FunctionAgent, ModelError, TextPart
from agenthost.agents.models import EchoModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import calculator, tool

pytestmark = pytest.mark.anyio


@tool
async def send_email(to: str) -> str:
    """Sends an email."""
    return "sent"


@pytest.mark.parametrize(
    ("agent", "contained"),
    [
        (ChatAgent("a", EchoModel()), True),
        (ChatAgent("a", EchoModel(), tools=(calculator, ASK_USER)), True),
        (ChatAgent("a", EchoModel(), tools=(send_email,)), False),
        (ChatAgent("a", OpenAIModel("gpt", base_url="http://127.0.0.1:9/v1", api_key="k")), False),
        (FunctionAgent("a", lambda messages: "x"), False),
    ],
)
def test_annotations_claim_no_more_than_is_known(agent: ChatAgent, contained: bool) -> None:
    hints = convert.tool_annotations(agent)
    assert hints.read_only_hint is False and hints.idempotent_hint is False
    assert hints.open_world_hint is (not contained)
    assert hints.destructive_hint is (not contained)


def test_a_question_result_names_the_session_to_answer_in() -> None:
    result = convert.to_question([call("ask_user", '{"question": "Which city?"}')], "s-9")
    assert result.structured_content == {
        "text": "Which city?",
        "status": "input_required",
        "session_id": "s-9",
    }
    assert "'s-9'" in result.content[0].text  # type: ignore[union-attr]


def test_unexpected_errors_are_not_described_to_the_client() -> None:
    internal = error_result(KeyError("secret"))
    assert internal.is_error and "secret" not in internal.content[0].text  # type: ignore[union-attr]
    failed = error_result(ModelError("boom"))
    assert failed.is_error and "boom" in failed.content[0].text  # type: ignore[union-attr]


def test_arguments_must_be_an_object_of_the_schema() -> None:
    # No arguments at all (a client calling a tool that needs none): an empty turn.
    assert convert.parse_arguments(None).message == ""
    with pytest.raises(MCPError, match="invalid arguments: message: Input should be"):
        convert.parse_arguments({"message": None})
    assert convert.parse_arguments({"message": "hi"}).session_id is None


PNG = base64.b64encode(b"\x89PNG...").decode()


def test_files_in_the_answer_follow_its_text_as_their_own_content() -> None:
    parts = [
        TextPart(text="look:"),
        FilePart(data=PNG, mime_type="image/png"),
        FilePart(data=PNG, mime_type="audio/wav"),
        FilePart(data=base64.b64encode(b"notes").decode(), mime_type="text/plain", url="x://n"),
        FilePart(data=PNG, mime_type="application/pdf", name="a.pdf"),
        FilePart(url="https://example.com/r.txt", mime_type="text/plain"),
    ]
    result = convert.to_result("look:", None, parts)
    kinds = [content.type for content in result.content]
    assert kinds == ["text", "image", "audio", "resource", "resource", "resource_link"]
    image, audio, text, blob, link = result.content[1:]
    assert isinstance(image, ImageContent) and image.data == PNG
    assert isinstance(audio, AudioContent) and audio.mime_type == "audio/wav"
    assert isinstance(text, EmbeddedResource)
    assert isinstance(text.resource, TextResourceContents) and text.resource.text == "notes"
    assert str(text.resource.uri) == "x://n"
    assert isinstance(blob, EmbeddedResource) and isinstance(blob.resource, BlobResourceContents)
    assert str(blob.resource.uri) == "file:///a.pdf"
    assert isinstance(link, ResourceLink) and link.name == "r.txt"
    # A file-only answer has no empty text before its files.
    only = convert.to_result("", None, [FilePart(data=PNG, mime_type="image/png")])
    assert [content.type for content in only.content] == ["image"]
    assert only.structured_content == {"text": "", "status": "completed", "session_id": None}


async def test_progress_is_throttled_and_the_last_piece_always_sent() -> None:
    sent: list[tuple[float, str | None]] = []

    async def report(progress: float, message: str | None) -> None:
        sent.append((progress, message))

    progress = ThrottledProgress(report, interval=60)
    for word in ("a ", "b ", "c"):
        await progress.text(word)
    await progress.text("")
    assert sent == [(2.0, "a ")]  # the first goes at once, the rest wait
    await progress.tick()  # a tool starts: what is gathered goes, then a bare notification
    await progress.flush()
    assert sent == [(2.0, "a "), (5.0, "b c"), (6.0, None)]
