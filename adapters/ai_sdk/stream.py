"""A run as the AI SDK's UI message stream, on the shared
:class:`~agenthost.adapters.runs.RunConsumer`.

``start`` (the message id), ``start-step``; the model's reasoning (when its
upstream sends it) as ``reasoning-start``/``reasoning-delta``/``reasoning-end``;
the answer's text as ``text-start``/``text-delta``/``text-end``; the agent's own tools as
``tool-input-start``/``tool-input-available`` then ``tool-output-available``
(``tool-output-error`` when it failed), each model step after a tool closed
by ``finish-step`` and opened by ``start-step``; a call the client must
answer (``ask_user``) as ``tool-input-start``/``tool-input-delta``/
``tool-input-available`` with no output, finishing ``tool-calls``; a call
of a tool that needs approval as ``tool-input-start``/``tool-input-available``
then ``tool-approval-request`` (its ``approvalId`` is the call's id), also
finishing ``tool-calls``; then ``finish`` with ``finishReason`` and the usage
in ``messageMetadata`` (``outputTokenDetails`` as ``ai``'s ``LanguageModelUsage``
has them when the upstream counted reasoning tokens), and ``[DONE]``. A failure once streaming is an
``error`` chunk.

The run an approval resumes continues the same assistant message: ``start``,
``tool-output-denied`` for each denied call, the approved calls' outputs
(their input is already the client's), then the next step.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import orjson

from agenthost.adapters.ai_sdk.approvals import Resume
from agenthost.adapters.ai_sdk.convert import usage_metadata
from agenthost.adapters.runs import RunConsumer
from agenthost.agents import (
    Message,
    RunResult,
    ToolCallDelta,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from agenthost.agents.errors import message_of
from agenthost.agents.tools.approvals import is_approval_request

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

    def __init__(self, agent: str, message_id: str, resume: Resume | None = None) -> None:
        super().__init__(agent)
        self.message_id = message_id
        self.resume = resume
        self.text_id: str | None = None
        self.reasoning_id: str | None = None
        self.in_step = False
        self.step_done = False  # a tool returned: the next output is a new step
        self.calls: dict[str, str] = {}  # client calls streamed: id → arguments sent

    async def on_start(self) -> Sequence[bytes]:
        out = [chunk({"type": "start", "messageId": self.message_id})]
        if self.resume is None:
            self.in_step = True
            out.append(chunk({"type": "start-step"}))
        else:  # the client's message goes on: its asked calls' outcomes come first
            for call_id in sorted(self.resume.denied):
                out.append(chunk({"type": "tool-output-denied", "toolCallId": call_id}))
        return out

    def text_events(self, text: str) -> Sequence[bytes]:
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
        if self.resume is not None and call.id in self.resume.approved:
            return ()  # the client shows this call already, approved
        out = self._next_step() + self._close_parts()
        start = {"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name}
        out += [chunk(start), chunk(_available(call))]
        return out

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[bytes]:
        self.step_done = self.in_step
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
        if result.pending:
            out = self._next_step() + out
        for call in result.pending:
            approval = is_approval_request(call)
            if approval:  # the client sees the call itself, to approve
                call = _asked(result.new_messages, call)
            if call.id not in self.calls:
                out.append(
                    chunk(
                        {"type": "tool-input-start", "toolCallId": call.id, "toolName": call.name}
                    )
                )
            out.append(chunk(_available(call)))
            if approval:
                request = {"type": "tool-approval-request", "approvalId": call.id}
                out.append(chunk({**request, "toolCallId": call.id}))
        finish = {
            "type": "finish",
            "finishReason": FINISH_REASONS.get(result.finish_reason, "other"),
            "messageMetadata": _usage_metadata(result.usage),
        }
        if self.in_step:
            out.append(chunk({"type": "finish-step"}))
        out += [chunk(finish), DONE]
        return out

    async def on_error(self, exc: Exception) -> Sequence[bytes]:
        # The status line is gone: the stream ends with the error.
        out = self._close_parts()
        out += [chunk({"type": "error", "errorText": message_of(exc)}), DONE]
        return out

    def _next_step(self) -> list[bytes]:
        out = []
        if self.step_done:
            self.step_done = self.in_step = False
            out.append(chunk({"type": "finish-step"}))
        if not self.in_step:
            self.in_step = True
            out.append(chunk({"type": "start-step"}))
        return out

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


def _asked(messages: Sequence[Message], question: ToolCallPart) -> ToolCallPart:
    """The call the approval ``question`` asks about (the same id), as the model made it."""
    for message in reversed(messages):
        for call in message.tool_calls:
            if call.id == question.id and call is not question:
                return call
    return question


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


def _usage_metadata(usage: Usage) -> dict[str, Any]:
    metadata = usage_metadata(usage.input_tokens, usage.output_tokens)
    if usage.reasoning_tokens:
        metadata["usage"]["outputTokenDetails"] = {
            "textTokens": usage.output_tokens - usage.reasoning_tokens,
            "reasoningTokens": usage.reasoning_tokens,
        }
    return metadata
