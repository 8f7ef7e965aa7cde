"""A run as the event stream Orchestrate reads, on the shared
:class:`~agenthost.adapters.runs.RunConsumer`.

Each event is one ``data: {id, object, thread_id, model, created, choices:
[{delta}]}`` line (the external-agent spec; no ``event:`` line, as the
toolkit's README shows them: the ADK's validator reads the stream in
128-byte chunks and takes an ``event:`` line cut by a chunk for data): the answer's text
is ``thread.message.delta`` (``delta.content``, one id for the answer); each
of the agent's own tool calls is a ``thread.run.step.delta`` whose
``step_details`` is ``{"type": "tool_calls", "tool_calls": [{id, name,
args}]}``, and its result one whose ``step_details`` is ``{"type":
"tool_response", tool_call_id, name, content}`` (the ids match, which is what
Orchestrate's chain of thought pairs them by). A question the run ends on
(``ask_user``) is text the user answers in the next turn. The stream ends
with ``data: [DONE]``; a failure once it has begun is a last text delta
naming it (the status line is gone). The model's reasoning (when its
upstream sends it) is a ``thinking`` step (``{"type": "thinking", content}``),
one step for each stretch of reasoning, sent whole when it ends (its text or
tool call begins, the run ends or fails): a step is an entry of Orchestrate's
chain of thought, not a stream of tokens.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import orjson

from agenthost.adapters.orchestrate.convert import answer_text, to_args
from agenthost.adapters.orchestrate.errors import from_exception
from agenthost.adapters.runs import RunConsumer
from agenthost.agents import ErrorKind, RunResult, ToolCallPart, ToolResultPart, kind_of

MESSAGE_DELTA = "thread.message.delta"
STEP_DELTA = "thread.run.step.delta"
DONE = b"data: [DONE]\n\n"


def sse_event(data: dict[str, Any]) -> bytes:
    """One event, its kind in the data's ``object``."""
    return b"data: " + orjson.dumps(data) + b"\n\n"


class ThreadEvents(RunConsumer[bytes]):
    """One run on thread ``thread_id`` (None: a run with no thread) as Orchestrate events."""

    def __init__(self, agent: str, thread_id: str | None) -> None:
        super().__init__(agent)
        self.thread_id = thread_id
        self.message_id = f"run-{os.urandom(8).hex()}"
        self.thought: list[str] = []  # the reasoning not sent yet

    def _event(self, object: str, id: str, delta: dict[str, Any]) -> bytes:
        data = {
            "id": id,
            "object": object,
            "thread_id": self.thread_id,
            "model": self.agent,
            "created": int(time.time()),
            "choices": [{"delta": {"role": "assistant", **delta}}],
        }
        return sse_event(data)

    def _text(self, text: str) -> bytes:
        return self._event(MESSAGE_DELTA, self.message_id, {"content": text})

    def _step(self, details: dict[str, Any]) -> bytes:
        return self._event(STEP_DELTA, f"step-{os.urandom(8).hex()}", {"step_details": details})

    def _thinking(self) -> list[bytes]:
        """The reasoning streamed since the last step, as one ``thinking`` step."""
        if not self.thought:
            return []
        content, self.thought = "".join(self.thought).strip(), []
        return [self._step({"type": "thinking", "content": content})] if content else []

    async def on_reasoning(self, text: str) -> Sequence[bytes]:
        self.thought.append(text)
        return ()

    async def on_text(self, text: str) -> Sequence[bytes]:
        return (*self._thinking(), self._text(text)) if text else ()

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[bytes]:
        step = {"id": call.id, "name": call.name, "args": to_args(call.arguments)}
        return (*self._thinking(), self._step({"type": "tool_calls", "tool_calls": [step]}))

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[bytes]:
        details = {
            "type": "tool_response",
            "tool_call_id": result.call_id,
            "name": result.name,
            "content": result.content,
        }
        return (self._step(details),)

    async def on_finished(self, result: RunResult) -> Sequence[bytes]:
        return (*self._thinking(), DONE)

    async def on_pending(self, result: RunResult) -> Sequence[bytes]:
        # What was streamed is the output; the questions come after it.
        rest = answer_text(result)[len(result.output) :].lstrip("\n")
        thinking = self._thinking()
        if not rest:
            return (*thinking, DONE)
        return (*thinking, self._text(("\n\n" if result.output else "") + rest), DONE)

    async def on_error(self, exc: Exception) -> Sequence[bytes]:
        if kind_of(exc) is ErrorKind.CANCELLED:
            return (DONE,)
        error = from_exception(exc)  # what the model reasoned before it failed comes first
        return (*self._thinking(), self._text(f"\n\nError: {error.message}"), DONE)
