"""A run as AG-UI events, on the shared :class:`~agenthost.adapters.runs.RunConsumer`.

``RUN_STARTED`` (with ``protocolVersion``) opens the stream; the model's
reasoning (when its upstream sends it) is ``REASONING_START``,
``REASONING_MESSAGE_START``/``CONTENT``/``END`` and ``REASONING_END``; the answer's text
is ``TEXT_MESSAGE_START``/``CONTENT``/``END`` (a new message after each tool
call, as the model's turns are); the agent's own tools are
``TOOL_CALL_START``/``ARGS``/``END`` then ``TOOL_CALL_RESULT``; a call of a
client tool is ``TOOL_CALL_START``/``ARGS``/``END`` with no result, and the
run finishes ``success`` naming it in ``pendingToolCallIds``; an ``ask_user``
question finishes the run with the ``interrupt`` outcome. A run that has state
(a framework agent's :class:`~agenthost.agents.StateSnapshot`) sends it whole as
``STATE_SNAPSHOT`` after each step that changed it. ``RUN_FINISHED``
carries the run's usage; a failure is ``RUN_ERROR`` (``code``: its kind; ``metadata``:
``{"kind", "retryable", "retryAfter"?}`` as every protocol's error data), a run
cancelled from within ``RUN_FINISHED`` with the ``cancelled`` outcome.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import orjson
from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.encoder import EventEncoder

from agenthost.adapters.runs import RunConsumer
from agenthost.agents import (
    ASK_USER,
    ErrorKind,
    RunResult,
    ToolCallDelta,
    ToolCallPart,
    ToolResultPart,
    Usage,
    kind_of,
    question_of,
)
from agenthost.agents.errors import details_of, message_of
from agenthost.agents.tools.approvals import is_approval_request
from agenthost.agents.tools.client import form_of

INTERRUPT_REASON = "input_required"
"""The ``reason`` of an ``ask_user`` interrupt."""
APPROVAL_REASON = "tool_approval"
"""The ``reason`` of an interrupt that asks to approve a tool call (``tool_call_id``);
its ``response_schema`` is the one-field form, answered ``{"approve": true}`` or a yes."""

_ENCODER = EventEncoder()


def encode(event: BaseEvent) -> bytes:
    """One event as an SSE ``data:`` line, by the package's own encoder."""
    return _ENCODER.encode(event).encode()


class AGUIEvents(RunConsumer[bytes]):
    """One run of thread ``thread_id`` as AG-UI events."""

    def __init__(self, agent: str, thread_id: str, run_id: str) -> None:
        super().__init__(agent)
        self.thread_id = thread_id
        self.run_id = run_id
        self.message_id: str | None = None  # the text message open now
        self.reasoning: tuple[str, str] | None = None  # the open reasoning: (phase, message)
        self.calls: dict[str, str] = {}  # client-tool calls streamed: id → arguments sent
        self.ended: set[str] = set()
        self._content_head = self._content_tail = b""

    async def on_start(self) -> Sequence[bytes]:
        started = RunStartedEvent(
            thread_id=self.thread_id, run_id=self.run_id, protocol_version=PROTOCOL_VERSION
        )
        return (encode(started),)

    def text_events(self, text: str) -> Sequence[bytes]:
        if not text:
            return ()
        closing = self._close_reasoning()
        if closing:
            return (*closing, *self.text_events(text))
        if self.message_id is not None:
            # == encode(TextMessageContentEvent(message_id=..., delta=text)), at a
            # twentieth of the cost per token: the event's bytes split once per message.
            return (self._content_head + orjson.dumps(text) + self._content_tail,)
        self.message_id = message_id = str(uuid.uuid4())
        event = encode(TextMessageContentEvent(message_id=message_id, delta=""))
        head, _, self._content_tail = event.rpartition(b'"delta":""')
        self._content_head = head + b'"delta":'
        started = TextMessageStartEvent(message_id=message_id, role="assistant")
        return (encode(started), self._content_head + orjson.dumps(text) + self._content_tail)

    async def on_reasoning(self, text: str) -> Sequence[bytes]:
        if not text:
            return ()
        out = self._close_text()
        if self.reasoning is None:
            self.reasoning = phase, message = str(uuid.uuid4()), str(uuid.uuid4())
            out.append(encode(ReasoningStartEvent(message_id=phase)))
            out.append(encode(ReasoningMessageStartEvent(message_id=message, role="reasoning")))
        content = ReasoningMessageContentEvent(message_id=self.reasoning[1], delta=text)
        out.append(encode(content))
        return out

    async def on_tool_call_delta(self, delta: ToolCallDelta) -> Sequence[bytes]:
        if delta.name == ASK_USER.name:
            return ()  # ask_user: an interrupt at the end, not a call shown to the UI
        out = self._close_parts()
        if delta.id not in self.calls:
            self.calls[delta.id] = ""
            out.append(encode(ToolCallStartEvent(tool_call_id=delta.id, tool_call_name=delta.name)))
        if delta.arguments:
            self.calls[delta.id] += delta.arguments
            out.append(encode(ToolCallArgsEvent(tool_call_id=delta.id, delta=delta.arguments)))
        return out

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[bytes]:
        out = self._close_parts()
        out += self._whole_call(call, None)
        return out

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[bytes]:
        event = ToolCallResultEvent(
            message_id=str(uuid.uuid4()),
            tool_call_id=result.call_id,
            content=result.content,
            role="tool",
        )
        return (encode(event),)

    async def on_state(self, state: dict[str, Any]) -> Sequence[bytes]:
        out = self._close_parts()  # a step ended: its text message with it
        out.append(encode(StateSnapshotEvent(snapshot=state)))
        return out

    async def on_finished(self, result: RunResult) -> Sequence[bytes]:
        out = self._close_parts()
        out.append(self._finished(result, None))
        return out

    async def on_pending(self, result: RunResult) -> Sequence[bytes]:
        out = self._close_parts()
        interrupts, calls = [], []
        for call in result.pending:
            question = question_of(call)
            if question is not None and is_approval_request(call):
                interrupt = Interrupt(
                    id=call.id,
                    reason=APPROVAL_REASON,
                    message=question,
                    tool_call_id=call.id,
                    response_schema=form_of(call),
                )
                interrupts.append(interrupt)
            elif question is not None:
                interrupts.append(Interrupt(id=call.id, reason=INTERRUPT_REASON, message=question))
            else:
                out += self._whole_call(call, self.calls.get(call.id))
                calls.append(call.id)
        outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome
        if interrupts:
            outcome = RunFinishedInterruptOutcome(interrupts=interrupts)
        else:
            outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=calls)
        out.append(self._finished(result, outcome))
        return out

    async def on_error(self, exc: Exception) -> Sequence[bytes]:
        # The status line is gone: the stream ends with the error, or (a run its agent or
        # a tool cancelled, the client still reading) with the cancelled outcome.
        out = self._close_parts()
        kind = kind_of(exc)
        if kind is ErrorKind.CANCELLED:
            finished = RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, outcome=RunFinishedCancelledOutcome()
            )
            out.append(encode(finished))
            return out
        error = RunErrorEvent(message=message_of(exc), code=kind.value, metadata=details_of(exc))
        out.append(encode(error))
        return out

    def _finished(
        self,
        result: RunResult,
        outcome: RunFinishedInterruptOutcome | RunFinishedSuccessOutcome | None,
    ) -> bytes:
        event = RunFinishedEvent(
            thread_id=self.thread_id,
            run_id=self.run_id,
            outcome=outcome,
            usage=to_usage(result.usage),
        )
        return encode(event)

    def _whole_call(self, call: ToolCallPart, sent: str | None) -> list[bytes]:
        """The rest of ``call``'s events, given the arguments ``sent`` so far (None: none)."""
        if call.id in self.ended:
            return []
        out = []
        if sent is None:
            out.append(encode(ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name)))
            sent = ""
        rest = call.arguments[len(sent) :] if call.arguments.startswith(sent) else ""
        if rest:
            out.append(encode(ToolCallArgsEvent(tool_call_id=call.id, delta=rest)))
        out.append(encode(ToolCallEndEvent(tool_call_id=call.id)))
        self.ended.add(call.id)
        return out

    def _close_parts(self) -> list[bytes]:
        """Ends the open text message or reasoning."""
        return self._close_reasoning() + self._close_text()

    def _close_text(self) -> list[bytes]:
        if self.message_id is None:
            return []
        event = TextMessageEndEvent(message_id=self.message_id)
        self.message_id = None
        return [encode(event)]

    def _close_reasoning(self) -> list[bytes]:
        if self.reasoning is None:
            return []
        phase, message = self.reasoning
        self.reasoning = None
        return [
            encode(ReasoningMessageEndEvent(message_id=message)),
            encode(ReasoningEndEvent(message_id=phase)),
        ]


def to_usage(usage: Usage) -> list[TokenUsage] | None:
    """The run's usage as AG-UI counts (None: the run made no model request)."""
    if not usage.requests and not usage.total_tokens:
        return None
    return [
        TokenUsage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=usage.total_tokens,
            reasoning_tokens=usage.reasoning_tokens or None,
        )
    ]
