"""The agents the MCP conformance suite calls by name (its fixture tools).

Each one acts through the runtime's ordinary outputs only: streamed text,
file parts in its answer, tool calls of its model, a failure. The MCP
adapter maps those like any agent's; it knows nothing of the suite.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio

from agenthost.agents import (
    BaseAgent,
    ChatAgent,
    FilePart,
    Message,
    ModelError,
    RunFinished,
    RunOptions,
    RunResult,
    RunUpdate,
    TextDelta,
    TextPart,
    tool,
)
from agenthost.agents import Part as AgentPart
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call

# A 1x1 red PNG and a tiny WAV, as the suite's reference server sends.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
    b"\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()
IMAGE = FilePart(data=PNG, mime_type="image/png", name="red.png")
AUDIO = FilePart(data=WAV, mime_type="audio/wav", name="test.wav")
RESOURCE = FilePart(
    data=base64.b64encode(b"This is an embedded resource content.").decode(),
    mime_type="text/plain",
    url="test://embedded-resource",
)


@dataclass(frozen=True)
class Answer:
    """Text pieces (``gap`` seconds apart when streamed) and parts after them."""

    pieces: tuple[str, ...] = ()
    parts: tuple[AgentPart, ...] = ()
    gap: float = 0.0
    fail: str | None = None


class FixtureAgent(BaseAgent):
    """Answers every call with the same :class:`Answer`."""

    def __init__(self, name: str, answer: Answer, description: str) -> None:
        super().__init__(name, description)
        self.answer = answer

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        answer = self.answer
        for index, piece in enumerate(answer.pieces):
            if index and answer.gap:
                await anyio.sleep(answer.gap)
            if stream:
                yield TextDelta(piece)
        if answer.fail is not None:
            raise ModelError(answer.fail)
        text = "".join(answer.pieces)
        parts: list[AgentPart] = [TextPart(text=text)] if text else []
        reply = Message(role="assistant", parts=[*parts, *answer.parts])
        yield RunFinished(RunResult(text, [*input, reply]))


def fixture(name: str, answer: Answer, description: str) -> FixtureAgent:
    return FixtureAgent(name, answer, description)


simple_text = fixture(
    "test_simple_text",
    Answer(pieces=("This is a simple text response for testing.",)),
    "Answers with text.",
)
image_content = fixture("test_image_content", Answer(parts=(IMAGE,)), "Answers with an image.")
audio_content = fixture("test_audio_content", Answer(parts=(AUDIO,)), "Answers with audio.")
embedded_resource = fixture(
    "test_embedded_resource",
    Answer(pieces=("An embedded resource:",), parts=(RESOURCE,)),
    "Answers with an embedded resource.",
)
multiple_content_types = fixture(
    "test_multiple_content_types",
    Answer(pieces=("Multiple content types test:",), parts=(IMAGE, RESOURCE)),
    "Answers with text, an image and a resource.",
)
error_handling = fixture(
    "test_error_handling",
    Answer(fail="This tool intentionally returns an error for testing"),
    "Always fails.",
)
tool_with_progress = fixture(
    "test_tool_with_progress",
    Answer(pieces=("0% ", "50% ", "100%"), gap=0.06),
    "Streams its answer in three pieces (three progress notifications).",
)


@tool
def step(number: int) -> str:
    """One step of the work."""
    return f"step {number} done"


def _three_steps(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return "Tool with logging executed successfully"
    return [call("step", f'{{"number": {n}}}') for n in (1, 2, 3)]


# Three tool calls: three "tool_started" log messages at info level.
tool_with_logging = ChatAgent(
    "test_tool_with_logging",
    FunctionModel(_three_steps, name="three-steps"),
    tools=(step,),
    description="Runs three steps; each is logged.",
)
# The same, under the name the 2026-07-28 server-stateless scenario probes
# (no log message without a logLevel in the request's _meta).
logging_tool = ChatAgent(
    "test_logging_tool",
    FunctionModel(_three_steps, name="three-steps"),
    tools=(step,),
    description="Runs three steps; each is logged.",
)

# The tasks scenarios' tool that takes no arguments: an agent that fails after
# a second (a client that declared MCP tasks gets it as a task that completes
# with an isError result). Their other tools take arguments (seconds, label,
# name) that an agent's tool schema (message, session_id) does not have.
failing_job = fixture(
    "failing_job",
    Answer(pieces=("working", "..."), gap=1.0, fail="This job always fails"),
    "Fails after a second.",
)
