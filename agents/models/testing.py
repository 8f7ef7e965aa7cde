"""Model doubles shipped in the package, so tests and demos need no key.

- :class:`ScriptedModel` answers with a fixed list of replies, in order.
- :class:`FunctionModel` answers with whatever a function returns.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from itertools import count

from agenthost.agents.messages import Message, Part, TextPart, ToolCallPart
from agenthost.agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelStreamEvent,
)
from agenthost.agents.models.echo import stream_words

Reply = str | ToolCallPart | list[str | ToolCallPart] | Message
ReplyFunction = Callable[[ModelRequest], Reply | Awaitable[Reply]]

_call_ids = count(1)


def call(name: str, arguments: str = "{}") -> ToolCallPart:
    """A tool call for a scripted reply, with a fresh id."""
    return ToolCallPart(id=f"call_{next(_call_ids)}", name=name, arguments=arguments)


def _to_message(reply: Reply) -> Message:
    if isinstance(reply, Message):
        return reply
    items = reply if isinstance(reply, list) else [reply]
    parts: list[Part] = [TextPart(text=i) if isinstance(i, str) else i for i in items]
    return Message(role="assistant", parts=parts)


class ScriptedModel(BaseChatModel):
    """Returns the given replies in order; ``requests`` records what it was sent."""

    def __init__(self, replies: Iterable[Reply], *, name: str = "scripted") -> None:
        self.name = name
        self._replies = [_to_message(r) for r in replies]
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        self.requests.append(request)
        if len(self.requests) > len(self._replies):
            raise RuntimeError(f"{self.name}: no scripted reply left")
        async for event in stream_words(request, self._replies[len(self.requests) - 1]):
            yield event


class FunctionModel(BaseChatModel):
    """Calls ``function(request)`` (sync or async) for every model request."""

    def __init__(self, function: ReplyFunction, *, name: str = "function") -> None:
        self.name = name
        self._function = function

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        reply = self._function(request)
        if inspect.isawaitable(reply):
            reply = await reply
        async for event in stream_words(request, _to_message(reply)):
            yield event
