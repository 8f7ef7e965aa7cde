"""The pure mappings: annotations, pending questions, argument errors, throttled progress."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from agenthost.adapters.mcp import convert
from agenthost.adapters.mcp.errors import error_result
from agenthost.adapters.mcp.progress import ThrottledProgress
from agenthost.agents import ASK_USER, ChatAgent, FunctionAgent, ModelError
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
    with pytest.raises(MCPError, match="invalid arguments: message: Field required"):
        convert.parse_arguments(None)
    assert convert.parse_arguments({"message": "hi"}).session_id is None


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
