"""Where a run stands, read from its log: the steps it finished, and what it lost.

A chat agent's run is a series of steps: the model answers (text and tool
calls), its tools run, their results go back. A step is finished once every
tool call it started has a recorded result; the log then holds everything
needed to go on without repeating it: the assistant message (the step's text
and calls) and the tool message (the results). A run resumed on another
replica is given the finished steps as part of its input, so a tool whose
result was recorded never runs again; the model call that was in flight, and
any tool call without a result, are made again, and what the lost step had
streamed is recorded as :class:`~agenthost.adapters.durable.events.Discarded`.

Agents whose steps are not their own tool calls (a workflow's steps,
framework agents) leave no finished steps: resumed, they start again from
their input (or declare ``durable: false`` to fail instead).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agenthost.adapters.durable.events import Discarded, LoggedUpdate
from agenthost.agents import (
    Message,
    TextDelta,
    TextPart,
    ToolCallFinished,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
)
from agenthost.agents.chat import STEP_SEPARATOR


@dataclass
class Progress:
    """What a run's updates so far say is done, fed one update at a time."""

    messages: list[Message] = field(default_factory=list)
    """The finished steps: an assistant message and a tool message each."""
    texts: list[str] = field(default_factory=list)
    """The text of each finished step that had some."""
    partial: str = ""
    """Text streamed since the last finished step."""
    calls: dict[str, ToolCallPart] = field(default_factory=dict)
    results: dict[str, ToolResultPart] = field(default_factory=dict)

    def add(self, update: LoggedUpdate) -> bool:
        """Take ``update`` in; True when it finished a step."""
        if isinstance(update, TextDelta):
            self.partial += update.text
        elif isinstance(update, ToolCallStarted):
            self.calls[update.call.id] = update.call
        elif isinstance(update, ToolCallFinished):
            self.results[update.result.call_id] = update.result
            if self.calls and self.calls.keys() <= self.results.keys():
                self._finish_step()
                return True
        elif isinstance(update, Discarded):
            self.partial, self.calls, self.results = "", {}, {}
        return False

    def _finish_step(self) -> None:
        text = self.partial.removeprefix(STEP_SEPARATOR) if self.texts else self.partial
        parts: list[TextPart | ToolCallPart] = [TextPart(text=text)] if text else []
        parts.extend(self.calls.values())
        results = [self.results[id] for id in self.calls]
        self.messages += [
            Message(role="assistant", parts=parts),
            Message(role="tool", parts=results),
        ]
        if text:
            self.texts.append(text)
        self.partial, self.calls, self.results = "", {}, {}

    def lost(self) -> Discarded | None:
        """What the unfinished step streamed (to be discarded on resume), if anything."""
        started = tuple(id for id in self.calls if id not in self.results)
        if not self.partial and not started:
            return None
        return Discarded(self.partial, started)

    @classmethod
    def of(cls, updates: Iterable[LoggedUpdate]) -> Progress:
        progress = cls()
        for update in updates:
            progress.add(update)
        return progress
