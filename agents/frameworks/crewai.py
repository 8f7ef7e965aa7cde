"""CrewAI's ``Agent`` and ``Crew``, kicked off with the user's message.

- An ``Agent`` runs with ``Agent.kickoff_async(messages)``: the whole
  conversation goes in as chat messages, so history continues per
  agenthost session.
- A ``Crew`` runs with ``Crew.kickoff_async(inputs)`` on a copy of the crew
  (CrewAI keeps task outputs on the object): its tasks read the user's
  message as ``{message}`` and the earlier conversation as ``{history}``.

A cancel ends agenthost's run at once, but not CrewAI's model call, which
runs on to its end (a streamed upstream reply is read to the last chunk;
a crew runs in CrewAI's worker thread).

The answer is the final output (``raw``), sent as one text delta when the
run ends: no token streaming yet. Usage comes from ``usage_metrics``.
CrewAI's telemetry and tracing are off only when ``CREWAI_DISABLE_TELEMETRY=true``
and ``OTEL_SDK_DISABLED=true`` are set before it is imported.

CrewAI pins ``openai<3`` and ``mcp<2``: it installs beside agenthost without
the ``openai``, ``mcp``, ``tools-mcp`` and ``openai-agents`` extras (so not in
``all``), and such a host serves it over every protocol but MCP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

try:
    from crewai import Agent as CrewAgent
    from crewai import Crew
except ImportError as exc:  # pragma: no cover - depends on the installed packages
    raise ImportError("serving CrewAI agents needs CrewAI: pip install agenthost crewai") from exc

from agenthost.agents.agent import BaseAgent
from agenthost.agents.errors import UserError
from agenthost.agents.frameworks import TypeRegistry
from agenthost.agents.messages import Message
from agenthost.agents.options import RunOptions
from agenthost.agents.results import RunFinished, RunResult, RunUpdate, TextDelta, Usage


class CrewAIAgent(BaseAgent):
    """A CrewAI ``Agent`` or ``Crew`` behind the uniform agent interface."""

    def __init__(self, name: str, runnable: CrewAgent | Crew, *, description: str = "") -> None:
        default = runnable.goal if isinstance(runnable, CrewAgent) else ""
        super().__init__(name, description or default)
        self.runnable = runnable

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        if not input or input[-1].role != "user":
            raise UserError("a CrewAI agent needs a user message last", param="messages")
        conversation = [*history, *input]
        if options.instructions:
            conversation.insert(0, Message.system(options.instructions))
        if isinstance(self.runnable, CrewAgent):
            output = await self.runnable.kickoff_async(to_chat(conversation))
        else:
            crew = self.runnable.copy()
            inputs = {"message": input[-1].text, "history": to_history(conversation[:-1])}
            output = await crew.kickoff_async(inputs=inputs)
        text = str(output.raw)
        if stream and text:
            yield TextDelta(text)
        usage = _usage(output.usage_metrics or {})
        yield RunFinished(RunResult(text, [*input, Message.assistant(text)], usage))


def to_chat(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our conversation as the chat messages ``Agent.kickoff`` takes (text only)."""
    roles = {"tool": "user"}  # a tool result without its call: shown to the model as text
    return [{"role": roles.get(m.role, m.role), "content": m.text} for m in messages if m.text]


def to_history(messages: Sequence[Message]) -> str:
    """The earlier conversation as text, for a crew's ``{history}`` input."""
    return "\n".join(f"{m.role}: {m.text}" for m in messages if m.text)


def _usage(metrics: dict[str, Any]) -> Usage:
    return Usage(
        int(metrics.get("prompt_tokens") or 0),
        int(metrics.get("completion_tokens") or 0),
        int(metrics.get("successful_requests") or 0),
    )


def register(registry: TypeRegistry) -> None:
    def wrap(obj: CrewAgent | Crew, name: str, description: str) -> CrewAIAgent:
        return CrewAIAgent(name, obj, description=description)

    registry.register_type(CrewAgent, wrap)
    registry.register_type(Crew, wrap)
