"""Microsoft Agent Framework agents (``agent_framework.BaseAgent``), streamed through ``run``.

Every run streams (``run(..., stream=True)``), for streamed and plain
answers alike: one path, and the updates count the model requests. The
agenthost session is carried as the framework's own :class:`AgentSession`:
one is made per run, keyed by the agenthost conversation, and its in-memory
history provider is seeded with the conversation so far. Nothing of one
session lives on the shared agent object, so two sessions never mix, and a
session kept in Redis continues on any replica. Tool calls stream as
:class:`ToolCallStarted` (once their arguments are complete) and
:class:`ToolCallFinished`. Closing the run cancels the framework's stream,
which closes the model's HTTP stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from functools import partial
from typing import Any
from uuid import uuid4

try:
    import agent_framework as maf
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "serving Microsoft Agent Framework agents needs the 'agent-framework' extra: "
        "pip install 'agenthost[agent-framework]'"
    ) from exc

from agenthost.agents.agent import BaseAgent
from agenthost.agents.errors import UserError
from agenthost.agents.frameworks import TypeRegistry
from agenthost.agents.frameworks.streams import Finished, stream_in_task
from agenthost.agents.messages import Message, Part, TextPart, ToolCallPart, ToolResultPart
from agenthost.agents.options import RunOptions
from agenthost.agents.results import (
    RunFinished,
    RunResult,
    RunUpdate,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from agenthost.agents.sessions import Session, conversation_of

HISTORY = maf.InMemoryHistoryProvider.DEFAULT_SOURCE_ID
"""The framework's default history provider, whose state the session seeds."""


class AgentFrameworkAgent(BaseAgent):
    """A Microsoft Agent Framework agent behind the uniform agent interface."""

    def __init__(self, name: str, agent: maf.BaseAgent, *, description: str = "") -> None:
        super().__init__(name, description or (agent.description or ""))
        self.agent = agent

    def _session_turn(
        self,
        history: list[Message],
        input: list[Message],
        options: RunOptions,
        *,
        stream: bool,
        session: Session | None,
    ) -> AsyncIterator[RunUpdate]:
        return self._turn(history, input, options, stream, conversation_of(session))

    def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        return self._turn(history, input, options, stream, None)

    async def _turn(
        self,
        history: list[Message],
        input: list[Message],
        options: RunOptions,
        stream: bool,
        conversation: str | None,
    ) -> AsyncIterator[RunUpdate]:
        if not input or input[-1].role != "user":
            raise UserError("an Agent Framework agent needs a user message last", param="input")
        session = self.agent.create_session(session_id=conversation or str(uuid4()))
        session.state[HISTORY] = {"messages": to_agent_framework(history)}
        run_options: dict[str, Any] = {}
        if options.instructions:
            run_options["instructions"] = options.instructions
        produce = partial(self._stream, to_agent_framework(input), session, run_options)
        async for item in stream_in_task(produce):
            if isinstance(item, Finished):
                response, requests = item.value
            elif stream:
                yield item
        new = [*input, *from_agent_framework(response.messages)]
        usage = response.usage_details or {}
        yield RunFinished(
            RunResult(
                response.text,
                new,
                Usage(
                    usage.get("input_token_count") or 0,
                    usage.get("output_token_count") or 0,
                    requests,
                ),
            )
        )

    async def _stream(
        self,
        messages: list[maf.Message],
        session: maf.AgentSession,
        options: dict[str, Any],
        emit: Any,
    ) -> tuple[maf.AgentResponse[Any], int]:
        calls = _Calls()
        requests = 0
        run: Any = getattr(self.agent, "run")  # noqa: B009 (each subclass types its own run)
        streamed = run(messages, stream=True, session=session, options=options or None)
        async for update in streamed:
            for content in update.contents:
                if content.type == "usage":
                    requests += 1
                elif content.type == "function_call":
                    calls.add(content)
                    continue
                for call in calls.complete():
                    emit(ToolCallStarted(call))
                if content.type == "text" and content.text:
                    emit(TextDelta(content.text))
                elif content.type == "function_result":
                    emit(ToolCallFinished(_result_of(content, calls.names)))
            if not update.contents:  # the end of a model message: its calls are complete
                for call in calls.complete():
                    emit(ToolCallStarted(call))
        return await streamed.get_final_response(), requests


class _Calls:
    """Function calls whose arguments arrive in pieces, until they are complete."""

    def __init__(self) -> None:
        self.open: dict[str, list[str]] = {}  # call id -> name, then argument pieces
        self.last = ""
        self.names: dict[str, str] = {}

    def add(self, content: maf.Content) -> None:
        call_id = content.call_id or self.last  # later pieces may carry no id
        self.last = call_id
        pieces = self.open.setdefault(call_id, [content.name or ""])
        if content.name and not pieces[0]:
            pieces[0] = content.name
        arguments = content.arguments
        pieces.append(arguments if isinstance(arguments, str) else json.dumps(arguments or {}))

    def complete(self) -> list[ToolCallPart]:
        done = [
            ToolCallPart(id=call_id, name=name, arguments="".join(rest) or "{}")
            for call_id, (name, *rest) in self.open.items()
        ]
        self.names.update((call.id, call.name) for call in done)
        self.open.clear()
        return done


def _result_of(content: maf.Content, names: dict[str, str]) -> ToolResultPart:
    call_id = content.call_id or ""
    result = content.result
    text = result if isinstance(result, str) else json.dumps(result, default=str)
    return ToolResultPart(
        call_id=call_id,
        name=names.get(call_id, ""),
        content=content.exception or text,
        is_error=content.exception is not None,
    )


def to_agent_framework(messages: Sequence[Message]) -> list[maf.Message]:
    """Our conversation as the framework's messages."""
    converted: list[maf.Message] = []
    for message in messages:
        contents: list[maf.Content] = []
        if message.text:
            contents.append(maf.Content.from_text(message.text))
        contents += [
            maf.Content.from_function_call(c.id, c.name, arguments=c.arguments)
            for c in message.tool_calls
        ]
        contents += [
            maf.Content.from_function_result(p.call_id, result=p.content)
            for p in message.parts
            if isinstance(p, ToolResultPart)
        ]
        converted.append(maf.Message(message.role, contents))
    return converted


def from_agent_framework(messages: Sequence[maf.Message]) -> list[Message]:
    """The framework's messages as ours (contents we have no equivalent for are left out)."""
    converted: list[Message] = []
    names: dict[str, str] = {}
    for message in messages:
        parts: list[Part] = []
        for content in message.contents:
            if content.type == "text" and content.text:
                parts.append(TextPart(text=content.text))
            elif content.type == "function_call" and content.call_id and content.name:
                names[content.call_id] = content.name
                arguments = content.arguments
                text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
                parts.append(ToolCallPart(id=content.call_id, name=content.name, arguments=text))
            elif content.type == "function_result":
                parts.append(_result_of(content, names))
        if parts:
            role = "tool" if message.role == "tool" else message.role
            converted.append(Message(role=role, parts=parts))
    return converted


def register(registry: TypeRegistry) -> None:
    def wrap(obj: maf.BaseAgent, name: str, description: str) -> AgentFrameworkAgent:
        return AgentFrameworkAgent(name, obj, description=description)

    registry.register_type(maf.BaseAgent, wrap)
