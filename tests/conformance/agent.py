"""The agent the A2A TCK drives: it acts out the TCK's scenarios.

The TCK picks a behaviour by the prefix of the message id (its
``scenarios/*.feature``). This agent reads the id the runtime hands it
(``Message.id``) and answers through the runtime's ordinary outputs only:
streamed text, data and file parts in its answer, a question to the user
(``ask_user``), a refusal (``RunRefused``). The A2A adapter knows nothing
of the TCK.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio

from agenthost.agents import (
    BaseAgent,
    DataPart,
    FilePart,
    Message,
    RunFinished,
    RunOptions,
    RunRefused,
    RunResult,
    RunUpdate,
    TextDelta,
    TextPart,
    ToolCallPart,
)
from agenthost.agents import Part as AgentPart
from agenthost.agents.tools import ASK_USER

TEXT_FILE = FilePart(
    data=base64.b64encode(b"tck").decode(), mime_type="text/plain", name="output.txt"
)
URL_FILE = FilePart(url="https://example.com/output.txt", mime_type="text/plain", name="output.txt")


@dataclass(frozen=True)
class Act:
    """One scenario: text pieces (``gap`` apart), other parts, a pause first, a
    question for the user, or a refusal."""

    pieces: tuple[str, ...] = ()
    parts: tuple[AgentPart, ...] = ()
    pause: float = 0.0
    gap: float = 0.0
    ask: str | None = None
    refuse: str | None = None


# Longer prefixes first: the first match wins.
SCENARIOS: list[tuple[str, Act]] = [
    ("tck-stream-artifact-chunked", Act(pieces=("chunk-1 ", "chunk-2"), gap=0.2)),
    ("test-resubscribe-message-id", Act(pause=4.0)),
    ("tck-stream-artifact-text", Act(pieces=("Streamed text content",))),
    ("tck-stream-artifact-file", Act(parts=(TEXT_FILE,))),
    ("tck-stream-ordering-001", Act(pieces=("Ordered output",))),
    ("tck-artifact-file-url", Act(parts=(URL_FILE,))),
    ("tck-message-response", Act(pieces=("Direct message response",))),
    ("tck-input-required", Act(ask="What else do you need?")),
    ("tck-complete-task", Act(pieces=("Hello from TCK",))),
    ("tck-artifact-text", Act(pieces=("Generated text content",))),
    ("tck-artifact-file", Act(parts=(TEXT_FILE,))),
    ("tck-artifact-data", Act(parts=(DataPart(data={"key": "value", "count": 42}),))),
    ("tck-reject-task", Act(refuse="rejected")),
    ("tck-stream-001", Act(pieces=("Stream hello from TCK",))),
    ("tck-stream-002", Act()),
    ("tck-stream-003", Act(pieces=("Stream task lifecycle",))),
]


def act_for(message_id: str) -> Act:
    for prefix, act in SCENARIOS:
        if message_id.startswith(prefix):
            return act
    return Act(pieces=(f"Unhandled messageId prefix: {message_id}",))


class ConformanceAgent(BaseAgent):
    """Acts out the scenario its input's message id names."""

    def __init__(self, name: str = "tck") -> None:
        super().__init__(name, "Acts out the A2A TCK's scenarios, chosen by message id.")

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        act = act_for(input[-1].id or "")
        if act.pause:
            await anyio.sleep(act.pause)
        if act.refuse:
            raise RunRefused(act.refuse)
        if act.ask:
            call = ToolCallPart(
                id="ask-1", name=ASK_USER.name, arguments=f'{{"question": "{act.ask}"}}'
            )
            asked = Message(role="assistant", parts=[call])
            yield RunFinished(
                RunResult("", [*input, asked], finish_reason="tool_calls", pending=[call])
            )
            return
        for index, piece in enumerate(act.pieces):
            if index and act.gap:
                await anyio.sleep(act.gap)
            if stream:
                yield TextDelta(piece)
        text = "".join(act.pieces)
        parts: list[AgentPart] = [TextPart(text=text)] if text else []
        answer = Message(role="assistant", parts=[*parts, *act.parts])
        yield RunFinished(RunResult(text, [*input, answer]))


agent = ConformanceAgent()
message_agent = ConformanceAgent("tck-message")
