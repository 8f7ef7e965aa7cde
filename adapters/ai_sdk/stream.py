"""A run as the AI SDK's UI message stream, on the shared
:class:`~agenthost.adapters.runs.RunConsumer`.

``start`` (the message id), ``start-step``; the model's reasoning (when its
upstream sends it) as ``reasoning-start``/``reasoning-delta``/``reasoning-end``;
the answer's text as ``text-start``/``text-delta``/``text-end``; the agent's own tools as
``tool-input-start``/``tool-input-available`` then ``tool-output-available``
(``tool-output-error`` when it failed), each model step after a tool closed
by ``finish-step`` and opened by ``start-step``; a call the client must
answer (``ask_user``) as ``tool-input-start``/``tool-input-delta``/
``tool-input-available`` with no output, finishing ``tool-calls``; then
``finish`` with ``finishReason`` and the usage in ``messageMetadata``, and
``[DONE]``. A failure once streaming is an ``error`` chunk.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import orjson

from agenthost.adapters.ai_sdk.convert import usage_metadata
from agenthost.adapters.runs import RunConsumer
from agenthost.agents import RunResult, ToolCallDelta, ToolCallPart, ToolResultPart
from agenthost.agents.errors import message_of

DONE = b"data: [DONE]\n\n"
FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "content_filter": "content-filter",
    "tool_calls": "tool-calls",
}


def chunk(value: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(value) + b"\n\n"


class UIMessageChunks(RunConsumer[bytes]):
    """One run as UI message chunks, building the assistant message ``message_id``."""

    def __init__(self, agent: str, message_id: str) -> None:
        super().__init__(agent)
        self.message_id = message_id
        self.text_id: str | None = None
        self.reasoning_id: str | None = None
        self.step_done = False  # a tool returned: the next output is a new step
        self.calls: dict[str, str] = {}  # client calls streamed: id → arguments sent

    async def on_start(self) -> Sequence[bytes]:
        return (
            chunk({"type": "start", "messageId": self.message_id}),
            chunk({"type": "start-step"}),
        )

    async def on_text(self, text: str) -> Sequence[bytes]:
        if not text:
            return ()
        out = self._next_step() + self._close_reasoning()
        if self.text_id is None:
            self.text_id = uuid.uuid4().hex
            out.append(chunk({"type": "text-start", "id": self.text_id}))
        out.append(chunk({"type": "text-delta", "id": self.text_id, "delta": text}))
        return out

    async def on_reasoning(self, text: str) -> Sequence[bytes]:
        if not text:
            return ()
        out = self._next_step() + self._close_text()
        if self.reasoning_id is None:
            self.reasoning_id = uuid.uuid4().hex
            out.append(chunk({"type": "reasoning-start", "id": self.reasoning_id}))
        out.append(chunk({"type": "reasoning-delta", "id": self.reasoning_id, "delta": text}))
        return out

    async def on_tool_call_delta(self, delta: ToolCallDelta) -> Sequence[bytes]:
        out = self._next_step() + self._close_parts()
        if delta.id not in self.calls:
            self.calls[delta.id] = ""
            start = {"type": "tool-input-start", "toolCallId": delta.id, "toolName": delta.name}
            out.append(chunk(start))
        if delta.arguments:
            self.calls[delta.id] += delta.arguments
            out.append(
                chunk(
                    {
                        "type": "tool-input-delta",
                        "toolCallId": delta.id,
                        "inputTextDelta": delta.arguments,
                    }
                )
            )
        return out

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[bytes]:
        out = self._next_step() + self._close_parts()
        start = {"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name}
        out += [chunk(start), chunk(_available(call))]
        return out

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[bytes]:
        self.step_done = True
        if result.is_error:
            error = {
                "type": "tool-output-error",
                "toolCallId": result.call_id,
                "errorText": result.content,
            }
            return (chunk(error),)
        output = {
            "type": "tool-output-available",
            "toolCallId": result.call_id,
            "output": result.content,
        }
        return (chunk(output),)

    async def on_finished(self, result: RunResult) -> Sequence[bytes]:
        out = self._close_parts()
        for call in result.pending:
            if call.id not in self.calls:
                out.append(
                    chunk(
                        {"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name}
                    )
                )
            out.append(chunk(_available(call)))
        usage = result.usage
        finish = {
            "type": "finish",
            "finishReason": FINISH_REASONS.get(result.finish_reason, "other"),
            "messageMetadata": usage_metadata(usage.input_tokens, usage.output_tokens),
        }
        out += [chunk({"type": "finish-step"}), chunk(finish), DONE]
        return out

    async def on_error(self, exc: Exception) -> Sequence[bytes]:
        # The status line is gone: the stream ends with the error.
        out = self._close_parts()
        out += [chunk({"type": "error", "errorText": message_of(exc)}), DONE]
        return out

    def _next_step(self) -> list[bytes]:
        if not self.step_done:
            return []
        self.step_done = False
        return [chunk({"type": "finish-step"}), chunk({"type": "start-step"})]

    def _close_parts(self) -> list[bytes]:
        """Ends the open text or reasoning part."""
        return self._close_reasoning() + self._close_text()

    def _close_text(self) -> list[bytes]:
        if self.text_id is None:
            return []
        out = [chunk({"type": "text-end", "id": self.text_id})]
        self.text_id = None
        return out

    def _close_reasoning(self) -> list[bytes]:
        if self.reasoning_id is None:
            return []
        out = [chunk({"type": "reasoning-end", "id": self.reasoning_id})]
        self.reasoning_id = None
        return out


def _available(call: ToolCallPart) -> dict[str, Any]:
    try:
        input = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        input = call.arguments
    return {
        "type": "tool-input-available",
        "toolCallId": call.id,
        "toolName": call.name,
        "input": input,
    }
