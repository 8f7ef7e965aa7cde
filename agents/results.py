"""What a run produces: usage, the final result and the streamed updates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart

FinishReason = Literal["stop", "length", "content_filter", "tool_calls"]
"""Why a run ended; ``tool_calls`` means it waits for the client (see ``pending``)."""


@dataclass(slots=True)
class Usage:
    """Token counts; adding two usages sums every field.

    ``reasoning_tokens`` are the part of ``output_tokens`` the model spent
    reasoning, when its upstream reports them (``completion_tokens_details``).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
            self.reasoning_tokens + other.reasoning_tokens,
        )


@dataclass(slots=True)
class RunResult:
    """The outcome of one run, streamed or not.

    ``new_messages`` are the input and every message the run produced, in
    order: exactly what a session appends for this turn.

    ``pending`` holds the tool calls the client must answer when the run
    ended waiting for it (client tools, ``ask_user``); the run is resumed by
    a next run whose input is a ``tool`` message answering each of them.
    """

    output: str
    new_messages: list[Message]
    usage: Usage = field(default_factory=Usage)
    finish_reason: FinishReason = "stop"
    pending: list[ToolCallPart] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    """What the run wants to show besides the answer (a workflow's state snapshots)."""
    reasoning: str = ""
    """What the model reasoned before answering, when its upstream sends it (each
    step's joined by a blank line); never part of ``new_messages``."""

    @property
    def awaiting_client(self) -> bool:
        """The run ended waiting for the client to answer ``pending``."""
        return bool(self.pending)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer's text."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning, as its upstream streams it (``reasoning_content``).

    Shown by protocols that have a place for it; never stored in the conversation.
    """

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """The agent started one of its own tools (never the client's tool call)."""

    call: ToolCallPart


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call's arguments, as the model streams them.

    From a model (a :data:`~agenthost.agents.models.ModelStreamEvent`): any
    call of its answer, ``index`` its place there. In a run's updates: only a
    call the run will end waiting on the client for (a client tool), ``index``
    its place in :attr:`RunResult.pending`. ``id`` and ``name`` are repeated in
    every piece; the pieces of ``arguments`` join into the call's arguments
    (the final :class:`~agenthost.agents.ToolCallPart` is authoritative: a model
    may settle an empty stream as ``{}``). Adapters that show a call only
    whole ignore these.
    """

    index: int
    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    """One of the agent's own tools finished (or failed: ``result.is_error``)."""

    result: ToolResultPart


@dataclass(frozen=True, slots=True)
class StateSnapshot:
    """The whole state of a run that has one (a LangGraph graph's channels, an ADK
    session's ``state``), after a step and at the end: JSON values only (build it with
    :func:`~agenthost.agents.frameworks.states.json_state`).

    Shown by protocols that have a place for it (AG-UI ``STATE_SNAPSHOT``); never
    stored in the conversation, never part of the result.
    """

    state: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RunFinished:
    """Always the last update of a streamed run; carries the final result."""

    result: RunResult


@dataclass(frozen=True, slots=True)
class SubAgentUpdate:
    """An update of another agent working for this run (handoff, pipeline or workflow step).

    ``agent`` names who is working (the sub-agent, or the step); ``update`` is
    its own update, possibly nested again. Adapters may show it as progress
    or ignore it: the run's answer arrives as this run's own ``TextDelta``s.
    """

    agent: str
    update: RunUpdate


RunUpdate = (
    TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | ToolCallStarted
    | ToolCallFinished
    | SubAgentUpdate
    | StateSnapshot
    | RunFinished
)


def tool_progress(update: RunUpdate) -> str | None:
    """``calling NAME`` when a tool call starts, prefixed by the sub-agents doing it
    (``researcher: calling search``); None for any other update."""
    workers: list[str] = []
    while isinstance(update, SubAgentUpdate):
        workers.append(update.agent)
        update = update.update
    if not isinstance(update, ToolCallStarted):
        return None
    return ": ".join([*workers, f"calling {update.call.name}"])
