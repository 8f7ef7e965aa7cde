"""A run as a Messages stream, in Anthropic's event sequence.

``message_start`` (an empty message), ``ping``, then content blocks one at a
time — ``content_block_start``, its ``content_block_delta`` s
(``text_delta``, or ``input_json_delta`` for a ``tool_use`` block), and
``content_block_stop`` — then ``message_delta`` with the ``stop_reason`` and
usage, and ``message_stop``. A failure once the stream has begun is an
``error`` event, which ends it.

Text is one block until the agent runs one of its own tools: the next
step's text is a new block. An upstream's reasoning is a ``thinking`` block
(``thinking_delta`` s) before the text it led to; its ``signature`` is empty
(no ``signature_delta``): nothing here verifies a thinking block sent back,
which the agent's model never reads. A client tool's call is a ``tool_use`` block,
its arguments streamed as the model writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthost.adapters.anthropic.convert import (
    STOP_REASONS,
    thinking_block,
    to_message,
    to_usage,
    tool_use,
)
from agenthost.adapters.anthropic.errors import from_exception
from agenthost.adapters.anthropic.http import sse_event
from agenthost.adapters.runs import RunConsumer
from agenthost.agents import RunResult, ToolCallDelta, ToolCallPart

_TEXT = object()  # the open block is text (otherwise: the id of the open tool_use block)
_THINKING = object()  # the open block is thinking


class MessageEvents(RunConsumer[bytes]):
    """The events of one streamed message."""

    def __init__(self, agent: str, id: str) -> None:
        super().__init__(agent)
        self.id = id
        self.index = -1  # the last block's index
        self.open: object = None  # the open block: _TEXT, a call's id, or None
        self.calls: dict[str, str] = {}  # the arguments streamed so far, by call id

    def _start(self, block: dict[str, Any], open: object) -> list[bytes]:
        events = self._stop()
        self.index += 1
        self.open = open
        event = {"type": "content_block_start", "index": self.index, "content_block": block}
        return [*events, sse_event(event)]

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return sse_event({"type": "content_block_delta", "index": self.index, "delta": delta})

    def _stop(self) -> list[bytes]:
        if self.open is None:
            return []
        self.open = None
        return [sse_event({"type": "content_block_stop", "index": self.index})]

    def _arguments(self, text: str) -> bytes:
        return self._delta({"type": "input_json_delta", "partial_json": text})

    async def on_start(self) -> Sequence[bytes]:
        message = to_message(None, id=self.id, model=self.agent)
        return (
            sse_event({"type": "message_start", "message": message}),
            sse_event({"type": "ping"}),
        )

    def text_events(self, text: str) -> Sequence[bytes]:
        if not text:
            return ()
        events = [] if self.open is _TEXT else self._start({"type": "text", "text": ""}, _TEXT)
        events.append(self._delta({"type": "text_delta", "text": text}))
        return events

    async def on_reasoning(self, text: str) -> Sequence[bytes]:
        if not text:
            return ()
        opening = self.open is not _THINKING
        events = self._start(thinking_block(""), _THINKING) if opening else []
        events.append(self._delta({"type": "thinking_delta", "thinking": text}))
        return events

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[bytes]:
        return self._stop()

    async def on_tool_call_delta(self, delta: ToolCallDelta) -> Sequence[bytes]:
        sent = self.calls.get(delta.id)
        events: list[bytes] = []
        if sent is None:
            call = ToolCallPart(id=delta.id, name=delta.name)
            events = self._start(tool_use(call, {}), delta.id)
            sent = ""
        elif self.open != delta.id:
            return ()  # a block is never reopened: the final call settles what is missing
        if delta.arguments:
            events.append(self._arguments(delta.arguments))
        self.calls[delta.id] = sent + delta.arguments
        return events

    async def on_finished(self, result: RunResult) -> Sequence[bytes]:
        events: list[bytes] = []
        for call in result.pending:
            sent = self.calls.get(call.id)
            if sent is None:
                events += self._start(tool_use(call, {}), call.id)
                if call.arguments:
                    events.append(self._arguments(call.arguments))
            elif (
                self.open == call.id and call.arguments.startswith(sent) and call.arguments != sent
            ):
                # What the final call adds (an empty stream settled as "{}").
                events.append(self._arguments(call.arguments[len(sent) :]))
        events += self._stop()
        stop = {"stop_reason": STOP_REASONS[result.finish_reason], "stop_sequence": None}
        delta = {"type": "message_delta", "delta": stop, "usage": to_usage(result.usage)}
        events += [sse_event(delta), sse_event({"type": "message_stop"})]
        return events

    async def on_error(self, exc: Exception) -> Sequence[bytes]:
        # The status line is gone: say it in the stream, which ends there.
        return (sse_event(from_exception(exc).body()),)
