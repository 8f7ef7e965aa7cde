"""LangGraph's compiled graphs over a ``messages`` state (``MessagesState`` and the like).

The conversation goes in as LangChain messages under ``messages``; the
messages the graph adds come back as ours (tool calls included), so
sessions keep the whole exchange. Streaming uses LangGraph's ``messages``
mode: chat model tokens as they come, and whole messages from nodes that
call no model. The answer is the text of the AI messages of the run.

The graph's state after each step (LangGraph's ``values`` mode) is a
:class:`~agenthost.agents.StateSnapshot` when a streamed run's JSON-safe state
(:func:`~agenthost.agents.frameworks.states.json_state`: the ``messages``
channel left out) is not empty and differs from the last one sent; the last is
the state the run ended with.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from typing import Any

try:
    from langchain_core.messages import (
        AIMessage,
        AIMessageChunk,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langgraph.pregel import Pregel
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "serving LangGraph graphs needs the 'langgraph' extra: pip install 'agenthost[langgraph]'"
    ) from exc

import orjson

from agenthost.agents.agent import BaseAgent
from agenthost.agents.frameworks import TypeRegistry
from agenthost.agents.frameworks.states import json_state
from agenthost.agents.frameworks.streams import Finished, stream_in_task
from agenthost.agents.messages import Message, Part, TextPart, ToolCallPart, ToolResultPart
from agenthost.agents.options import RunOptions
from agenthost.agents.results import (
    RunFinished,
    RunResult,
    RunUpdate,
    StateSnapshot,
    TextDelta,
    Usage,
)

# Between the texts of two AI messages of one run, as for chat agents' steps.
SEPARATOR = "\n\n"


class LangGraphAgent(BaseAgent):
    """A compiled LangGraph graph behind the uniform agent interface."""

    def __init__(self, name: str, graph: Pregel[Any, Any], *, description: str = "") -> None:
        super().__init__(name, description)
        self.graph = graph

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        head = [SystemMessage(options.instructions)] if options.instructions else []
        sent = [*head, *to_langchain([*history, *input])]
        if stream:
            state: dict[str, Any] = {}
            async for item in stream_in_task(partial(self._stream, sent)):
                if isinstance(item, Finished):
                    state = item.value
                else:
                    yield item
        else:
            state = await self.graph.ainvoke({"messages": sent})
        produced = list(state.get("messages", []))[len(sent) :]
        replies = from_langchain(produced)
        output = SEPARATOR.join(m.text for m in replies if m.role == "assistant" and m.text)
        yield RunFinished(RunResult(output, [*input, *replies], _usage(produced)))

    async def _stream(
        self, sent: list[BaseMessage], emit: Callable[[RunUpdate], None]
    ) -> dict[str, Any]:
        state: dict[str, Any] = {}
        shown: dict[str, Any] = {}  # the state last sent as a snapshot
        current: str | None = None  # the id of the AI message being streamed
        updates: AsyncIterator[Any] = self.graph.astream(
            {"messages": sent}, stream_mode=["messages", "values"]
        )
        async for item in updates:
            mode, chunk = item
            if mode == "values":
                state = chunk
                if (snapshot := json_state(state)) != shown:
                    shown = snapshot
                    emit(StateSnapshot(snapshot))
                continue
            message = chunk[0]
            if not isinstance(message, AIMessage | AIMessageChunk) or not message.text:
                continue
            if current is not None and message.id != current:
                emit(TextDelta(SEPARATOR))
            current = message.id
            emit(TextDelta(message.text))
        return state


def register(registry: TypeRegistry) -> None:
    def wrap(obj: Pregel[Any, Any], name: str, description: str) -> LangGraphAgent:
        return LangGraphAgent(name, obj, description=description)

    registry.register_type(Pregel, wrap)


def to_langchain(messages: Sequence[Message]) -> list[BaseMessage]:
    """Our conversation as LangChain messages."""
    converted: list[BaseMessage] = []
    for message in messages:
        if message.role == "assistant":
            calls = [
                {"name": c.name, "args": _arguments(c.arguments), "id": c.id, "type": "tool_call"}
                for c in message.tool_calls
            ]
            converted.append(AIMessage(content=message.text, tool_calls=calls))
        elif message.role == "tool":
            converted += [
                ToolMessage(content=p.content, tool_call_id=p.call_id, name=p.name)
                for p in message.parts
                if isinstance(p, ToolResultPart)
            ]
        elif message.role == "system":
            converted.append(SystemMessage(message.text))
        else:
            converted.append(HumanMessage(message.text))
    return converted


def from_langchain(messages: Sequence[BaseMessage]) -> list[Message]:
    """LangChain messages as ours."""
    converted: list[Message] = []
    for message in messages:
        if isinstance(message, AIMessage):
            parts: list[Part] = [TextPart(text=message.text)] if message.text else []
            parts += [
                ToolCallPart(
                    id=c["id"] or "", name=c["name"], arguments=orjson.dumps(c["args"]).decode()
                )
                for c in message.tool_calls
            ]
            if parts:
                converted.append(Message(role="assistant", parts=parts))
        elif isinstance(message, ToolMessage):
            result = ToolResultPart(
                call_id=message.tool_call_id, name=message.name or "", content=message.text
            )
            converted.append(Message(role="tool", parts=[result]))
        elif isinstance(message, HumanMessage):
            converted.append(Message.user(message.text))
        elif isinstance(message, SystemMessage):
            converted.append(Message.system(message.text))
    return converted


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _usage(messages: Sequence[BaseMessage]) -> Usage:
    usage = Usage()
    for message in messages:
        if isinstance(message, AIMessage):
            counted = message.usage_metadata
            tokens = (counted["input_tokens"], counted["output_tokens"]) if counted else (0, 0)
            usage += Usage(*tokens, requests=1)
    return usage
