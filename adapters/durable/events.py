"""A run's updates as the JSON events of its log, and back.

Every update a run yields (:data:`~agenthost.agents.RunUpdate`) is one event,
compact JSON bytes with a ``t`` (type) field; so are what happens to the run
itself: its error, its cancel, and a resume on another replica, which first
records the events of the lost partial step as :class:`Discarded`. Reading a
log back gives the same updates, so a protocol's stream encoder (a
:class:`~agenthost.adapters.runs.RunConsumer`) replays a run exactly as it
streamed it live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from agenthost.agents import (
    Message,
    ReasoningDelta,
    RunCancelled,
    RunFinished,
    RunResult,
    RunUpdate,
    StateSnapshot,
    SubAgentUpdate,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
    Usage,
)
from agenthost.agents.errors import AgentError, ErrorKind, kind_of, message_of, retryable_of

TERMINAL = frozenset({b"finished", b"failed", b"cancelled"})
"""Event types after which a run's log has no more events."""


@dataclass(frozen=True, slots=True)
class Discarded:
    """What a replica that died had streamed of a step it did not finish.

    The run resumed from its last finished step on another replica: ``text``
    (the end of the answer's text streamed so far) and the ``calls`` started
    without a recorded result are not part of the answer; each protocol's
    stream says so in its own way before the resumed events follow.
    """

    text: str
    calls: tuple[str, ...] = ()


class LoggedError(AgentError):
    """A run's failure as its log recorded it (raised to whoever follows the run)."""

    def __init__(self, message: str, kind: ErrorKind, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable


LoggedUpdate = RunUpdate | Discarded
"""What a log replays: a run's updates, and the discards of resumed runs."""


def encode(update: LoggedUpdate) -> bytes:
    """``update`` as one event of the log."""
    if type(update) is TextDelta:  # most events: no dict made
        return b'{"t":"text","x":' + orjson.dumps(update.text) + b"}"
    return orjson.dumps(_event(update))


def _event(update: LoggedUpdate) -> dict[str, Any]:
    if isinstance(update, TextDelta):
        return {"t": "text", "x": update.text}
    if isinstance(update, ReasoningDelta):
        return {"t": "reasoning", "x": update.text}
    if isinstance(update, ToolCallDelta):
        return {
            "t": "call_delta",
            "index": update.index,
            "id": update.id,
            "name": update.name,
            "arguments": update.arguments,
        }
    if isinstance(update, ToolCallStarted):
        return {"t": "tool_started", "call": update.call.model_dump(mode="json")}
    if isinstance(update, ToolCallFinished):
        return {"t": "tool_finished", "result": update.result.model_dump(mode="json")}
    if isinstance(update, StateSnapshot):
        return {"t": "state", "state": update.state}
    if isinstance(update, SubAgentUpdate):
        return {"t": "sub", "agent": update.agent, "update": _event(update.update)}
    if isinstance(update, Discarded):
        return {"t": "discarded", "text": update.text, "calls": list(update.calls)}
    assert isinstance(update, RunFinished)
    return {"t": "finished", "result": result_json(update.result)}


def result_json(result: RunResult) -> dict[str, Any]:
    return {
        "output": result.output,
        "new_messages": [m.model_dump(mode="json", exclude_none=True) for m in result.new_messages],
        "usage": _usage(result.usage),
        "finish_reason": result.finish_reason,
        "pending": [c.model_dump(mode="json") for c in result.pending],
        "metadata": result.metadata,
        **({"reasoning": result.reasoning} if result.reasoning else {}),
    }


def _usage(usage: Usage) -> list[int]:
    """Input, output, requests, and reasoning tokens only when there are some (a record
    of three numbers, as older replicas write, reads 0)."""
    counts = [usage.input_tokens, usage.output_tokens, usage.requests]
    return [*counts, usage.reasoning_tokens] if usage.reasoning_tokens else counts


def result_of(data: dict[str, Any]) -> RunResult:
    return RunResult(
        data["output"],
        [Message.model_validate(m) for m in data["new_messages"]],
        Usage(*data["usage"]),
        data["finish_reason"],
        [ToolCallPart.model_validate(c) for c in data["pending"]],
        data.get("metadata") or {},
        data.get("reasoning") or "",
    )


def failed(exc: BaseException) -> bytes:
    """The event that ends a failed run."""
    error = {"message": message_of(exc), "kind": kind_of(exc).value, "retryable": retryable_of(exc)}
    return orjson.dumps({"t": "failed", "error": error})


CANCELLED = orjson.dumps({"t": "cancelled"})
"""The event that ends a cancelled run."""


def decode(raw: bytes) -> LoggedUpdate | None:
    """The update that ``raw`` records; raises the run's error for a ``failed`` or
    ``cancelled`` event.

    None for an event of a type this version does not know: a newer replica
    wrote it during a rolling upgrade (a kind of update added since). The
    reader skips it, as a client skips an event type it does not know, and the
    run's other events, its answer and its end still read.
    """
    return _update(orjson.loads(raw))


def _update(event: dict[str, Any]) -> LoggedUpdate | None:
    kind = event["t"]
    if kind == "text":
        return TextDelta(event["x"])
    if kind == "reasoning":
        return ReasoningDelta(event["x"])
    if kind == "call_delta":
        return ToolCallDelta(event["index"], event["id"], event["name"], event["arguments"])
    if kind == "tool_started":
        return ToolCallStarted(ToolCallPart.model_validate(event["call"]))
    if kind == "tool_finished":
        return ToolCallFinished(ToolResultPart.model_validate(event["result"]))
    if kind == "state":
        return StateSnapshot(event["state"])
    if kind == "sub":
        inner = _update(event["update"])
        assert not isinstance(inner, Discarded)
        return None if inner is None else SubAgentUpdate(event["agent"], inner)
    if kind == "discarded":
        return Discarded(event["text"], tuple(event["calls"]))
    if kind == "finished":
        return RunFinished(result_of(event["result"]))
    if kind == "cancelled":
        raise RunCancelled("the run was cancelled")
    if kind != "failed":
        return None
    error = event["error"]
    raise LoggedError(error["message"], ErrorKind(error["kind"]), retryable=error["retryable"])


def event_type(raw: bytes) -> bytes:
    """An event's type without decoding it (every event starts ``{"t":"<type>"``)."""
    return raw[6 : raw.index(b'"', 6)]
