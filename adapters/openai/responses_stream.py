"""The server-sent events of a streamed response, as OpenAI sends them.

Each event has an ``event:`` line naming its type and a ``data:`` line with
the event object (``sequence_number`` counts from 0). Text streams as it is
made; a call of a client tool is a ``function_call`` item in the standard
fragments (added, arguments deltas, arguments done, done), its arguments
streamed as the model streams them (whole at the end when the model does
not stream them). Items take their ``output_index`` in the order they open,
and the completed response lists them in that order.

An upstream's reasoning (``reasoning_content``) is a ``reasoning`` item whose
``content`` is one ``reasoning_text`` part, streamed with
``response.reasoning_text.delta``: it is the model's raw thought, which the
Responses API keeps apart from a ``summary`` (a summariser's text that no
model here writes). The item stays open until the response completes, later
steps' reasoning joining it.

The agent's own tool calls and its sub-agents' steps (handoffs, pipeline and
workflow steps) have no place in OpenAI's events; they are sent as SSE
comments, ``: agenthost {...}``, which every SSE client ignores and the
playground shows (see :func:`progress_comment`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from agenthost.adapters.durable import Discarded
from agenthost.adapters.openai.errors import OpenAIError, from_exception
from agenthost.adapters.openai.http import sse_event
from agenthost.adapters.openai.items import (
    Item,
    function_call_item,
    message_item,
    reasoning_item,
    reasoning_text,
)
from agenthost.adapters.runs import RunConsumer
from agenthost.agents import (
    RunCancelled,
    RunResult,
    RunUpdate,
    SubAgentUpdate,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
)

if TYPE_CHECKING:
    from agenthost.adapters.openai.turns import Turn


_MARK = "agenthost:template-delta"  # the text of a delta event's template (_Events.text_deltas)


class EventEncoder(Protocol):
    """One event on the wire: an SSE event (:func:`sse_event`), or JSON alone (WebSocket)."""

    def __call__(self, data: Any, *, event: str | None = None) -> bytes: ...


class _Events:
    """Numbers the events of one stream; those numbered up to ``skip`` are left out
    (empty bytes): a client that saw them reconnects after them."""

    def __init__(self, skip: int | None = None, encode: EventEncoder = sse_event) -> None:
        self.sequence = 0
        self.skip = -1 if skip is None else skip
        self.encode = encode

    def __call__(self, type: str, **fields: Any) -> bytes:
        sequence = self.sequence
        self.sequence += 1
        if sequence <= self.skip:
            return b""
        data = {"type": type, "sequence_number": sequence, **fields}
        return self.encode(data, event=type)

    def text_deltas(self, where: dict[str, Any]) -> Callable[[str], bytes]:
        """``response.output_text.delta`` events at ``where``, numbered in turn: the same
        bytes as this object's, but built from the event encoded once, only the sequence
        number and the text encoded per delta (the hottest event: one per token)."""
        type = "response.output_text.delta"
        data = {"type": type, "sequence_number": 0, **where, "delta": _MARK, "logprobs": []}
        sample = self.encode(data, event=type)
        number, mark = b'"sequence_number":0', b'"delta":' + orjson.dumps(_MARK)
        head, _, rest = sample.partition(number)
        middle, _, tail = rest.partition(mark)
        if sample.count(number) != 1 or sample.count(mark) != 1 or mark not in rest:
            # An encoder of another shape: dict by dict.
            return lambda text: self(type, **where, delta=text, logprobs=[])
        head += b'"sequence_number":'
        middle += b'"delta":'

        def delta(text: str) -> bytes:
            sequence = self.sequence
            self.sequence = sequence + 1
            if sequence <= self.skip:
                return b""
            return b"".join((head, b"%d" % sequence, middle, orjson.dumps(text), tail))

        return delta


class ResponseEvents(RunConsumer[bytes]):
    """A run of ``turn`` as the events of a streamed response."""

    def __init__(
        self,
        agent: str,
        turn: Turn,
        *,
        saving: bool = True,
        starting_after: int | None = None,
        encode: EventEncoder = sse_event,
    ) -> None:
        """``saving``: the response is saved when it completes (False for a background
        response, which its run saves); ``starting_after``: events up to that sequence
        number are left out (a background response's stream picked up again);
        ``encode``: how an event goes on the wire (progress comments stay SSE comments)."""
        super().__init__(agent)
        self.turn = turn
        self.saving = saving
        self.event = _Events(starting_after, encode)
        self.attempt = 0  # steps discarded so far (a resumed background response)
        self.texts: list[str] = []  # the text streamed in the open message item
        self.carried = ""
        self.where = {"item_id": turn.message_id, "output_index": 0, "content_index": 0}
        self.opened = False
        self.worker: tuple[str, ...] = ()
        self.items: list[str] = []  # the items opened, in order: the message's id, call ids
        self.calls: dict[str, tuple[str, str]] = {}  # call id → (item id, arguments sent)
        self.reasoning: dict[str, Any] | None = None  # where the open reasoning item is
        self._text_delta: Callable[[str], bytes] | None = None  # at where (_open_message's)

    @property
    def message_id(self) -> str:
        """The answer's message item (another one after each discarded step)."""
        id = self.turn.message_id
        return id if not self.attempt else f"{id}_{self.attempt}"

    def _open_message(self) -> list[bytes]:
        self.opened = True
        index = self.where["output_index"] = len(self.items)
        id = self.where["item_id"] = self.message_id
        self.items.append(id)
        item = message_item(id, None, status="in_progress")
        self._text_delta = self.event.text_deltas(self.where)
        events = [
            self.event("response.output_item.added", output_index=index, item=item),
            self.event("response.content_part.added", **self.where, part=_text("")),
        ]
        if self.carried:  # the text of the steps kept when a lost one was discarded
            self.texts = [self.carried]
            delta = self.event(
                "response.output_text.delta", **self.where, delta=self.carried, logprobs=[]
            )
            events.append(delta)
            self.carried = ""
        return events

    async def on_start(self) -> Sequence[bytes]:
        in_progress = self.turn.response(status="in_progress")
        return (
            self.event("response.created", response=in_progress),
            self.event("response.in_progress", response=in_progress),
        )

    def text_events(self, text: str) -> Sequence[bytes]:
        opening = () if self.opened else self._open_message()
        self.texts.append(text)
        assert self._text_delta is not None, "the message item is open"
        delta = self._text_delta(text)  # == self.event(..., **self.where, delta=text, logprobs=[])
        return (*opening, delta) if opening else (delta,)

    async def on_reasoning(self, text: str) -> Sequence[bytes]:
        opening = self._open_reasoning(len(self.items)) if self.reasoning is None else []
        delta = self.event("response.reasoning_text.delta", **self._reasoning_at, delta=text)
        return [*opening, delta]

    @property
    def _reasoning_at(self) -> dict[str, Any]:
        assert self.reasoning is not None, "the reasoning item is open"
        return self.reasoning

    def _open_reasoning(self, index: int) -> list[bytes]:
        id = f"rs_{self.turn.hex}"
        self.reasoning = {"item_id": id, "output_index": index, "content_index": 0}
        self.items.append(id)
        item = reasoning_item(id, {}, status="in_progress")
        return [
            self.event("response.output_item.added", output_index=index, item=item),
            self.event("response.content_part.added", **self.reasoning, part=reasoning_text("")),
        ]

    async def on_tool_call_delta(self, delta: ToolCallDelta) -> Sequence[bytes]:
        events: list[bytes] = []
        if delta.id not in self.calls:
            call = ToolCallPart(id=delta.id, name=delta.name, arguments="")
            item = function_call_item(call, id=f"fc_{self.turn.hex}_{delta.index}")
            self.calls[delta.id] = (item["id"], "")
            self.items.append(delta.id)
            events.append(
                self.event(
                    "response.output_item.added",
                    output_index=len(self.items) - 1,
                    item={**item, "status": "in_progress"},
                )
            )
        item_id, sent = self.calls[delta.id]
        if delta.arguments:
            self.calls[delta.id] = (item_id, sent + delta.arguments)
            where = {"item_id": item_id, "output_index": self.items.index(delta.id)}
            events.append(
                self.event("response.function_call_arguments.delta", **where, delta=delta.arguments)
            )
        return events

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[bytes]:
        return (progress_comment(_started(call)),)

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[bytes]:
        return (progress_comment(_finished(result)),)

    async def on_sub_agent(self, update: SubAgentUpdate) -> Sequence[bytes]:
        workers: list[str] = []
        inner: RunUpdate = update
        while isinstance(inner, SubAgentUpdate):
            workers.append(inner.agent)
            inner = inner.update
        out: list[bytes] = []
        if tuple(workers) != self.worker:  # a step or handoff starts (not once per token)
            self.worker = tuple(workers)
            out.append(progress_comment({"type": "agent", "agents": workers}))
        if isinstance(inner, ToolCallStarted):
            out.append(progress_comment({**_started(inner.call), "agents": workers}))
        elif isinstance(inner, ToolCallFinished):
            out.append(progress_comment({**_finished(inner.result), "agents": workers}))
        return out

    async def on_finished(self, result: RunResult) -> Sequence[bytes]:
        event, where = self.event, self.where
        response = await self.completed(result)
        if self.attempt:
            for item in response["output"]:
                if item["type"] == "message":
                    item["id"] = self.message_id
        output: list[Item] = self._in_stream_order(response["output"])
        response["output"] = output
        if self.saving:
            await self.turn.save(response)
        events: list[bytes] = []
        for index, item in enumerate(output):
            if item["type"] == "reasoning":
                events += self._reasoning_done(index, item)
            elif item["type"] == "message":
                if not self.opened:
                    events += self._open_message()
                text = result.output
                events.append(event("response.output_text.done", **where, text=text, logprobs=[]))
                events.append(event("response.content_part.done", **where, part=_text(text)))
            elif item["call_id"] in self.calls:
                events += _streamed_call_done(event, index, item, self.calls[item["call_id"]][1])
            else:
                events += _function_call(event, index, item)
            events.append(event("response.output_item.done", output_index=index, item=item))
        events.append(event(f"response.{response['status']}", response=response))
        return events

    def _reasoning_done(self, index: int, item: Item) -> list[bytes]:
        """The end of the reasoning item (opened now if no delta opened it)."""
        part = item["content"][0]
        events = self._open_reasoning(index) if self.reasoning is None else []
        where = self._reasoning_at
        if events:  # opened now: its whole text in one delta
            delta = part["text"]
            events.append(self.event("response.reasoning_text.delta", **where, delta=delta))
        events.append(self.event("response.reasoning_text.done", **where, text=part["text"]))
        events.append(self.event("response.content_part.done", **where, part=part))
        return events

    def _in_stream_order(self, output: list[Item]) -> list[Item]:
        """The items in the order they were opened (those never opened after them);
        a streamed call keeps the item id it was streamed with."""
        for item in output:
            if item["type"] == "function_call" and item["call_id"] in self.calls:
                item["id"] = self.calls[item["call_id"]][0]

        def opened_at(pair: tuple[int, Item]) -> int:
            index, item = pair
            key = item.get("call_id") if item["type"] == "function_call" else item["id"]
            return self.items.index(key) if key in self.items else len(self.items) + index

        return [item for _, item in sorted(enumerate(output), key=opened_at)]

    async def completed(self, result: RunResult) -> dict[str, Any]:
        """The completed response the stream ends with."""
        return self.turn.completed(result)

    async def on_discarded(self, lost: Discarded) -> Sequence[bytes]:
        """The replica writing this response died mid-step: the message item it was
        writing ends ``incomplete`` (its text as streamed), and the answer goes on in a
        new message item once the run resumes elsewhere."""
        events: list[bytes] = []
        text = "".join(self.texts)
        if lost.text and text.endswith(lost.text):
            self.carried = text[: len(text) - len(lost.text)]
        if self.opened:
            where = self.where
            item = message_item(self.message_id, None, status="incomplete")
            item["content"] = [_text(text)]
            events += [
                self.event("response.output_text.done", **where, text=text, logprobs=[]),
                self.event("response.content_part.done", **where, part=_text(text)),
                self.event(
                    "response.output_item.done", output_index=where["output_index"], item=item
                ),
            ]
            self.opened = False
        self.attempt += 1
        events.append(progress_comment({"type": "discarded", "text": lost.text}))
        return events

    async def on_error(self, exc: Exception) -> Sequence[bytes]:
        """``error`` then ``response.failed``, as OpenAI ends a stream that failed (before
        its first token too: the stream started at once); a cancelled run only the latter."""
        if isinstance(exc, RunCancelled):
            cancelled = self.turn.response(status="cancelled")
            return (self.event("response.failed", response=cancelled),)
        error = from_exception(exc)
        failed = self.turn.response(status="failed", error=failure(error))
        fields = {"code": error.code, "message": error.message, "param": error.param}
        return (
            # The documented fields at the top; the envelope that OpenAI also sends
            # under "error", which makes the openai SDKs raise an APIError that
            # reads like a status's (type, code, message).
            self.event("error", **fields, error=error.body()["error"]),
            self.event("response.failed", response=failed),
        )


def progress_comment(data: dict[str, Any]) -> bytes:
    """An SSE comment line carrying a step of the run that OpenAI's events cannot."""
    return b": agenthost " + orjson.dumps(data) + b"\n\n"


def _started(call: ToolCallPart) -> dict[str, Any]:
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}


PROGRESS_OUTPUT_CHARS = 2000
"""A tool result's characters shown in a progress comment (it is progress, not the answer)."""


def _finished(result: ToolResultPart) -> dict[str, Any]:
    output = result.content
    return {
        "type": "tool_result",
        "id": result.call_id,
        "name": result.name,
        "output": output[:PROGRESS_OUTPUT_CHARS],
        "truncated": len(output) > PROGRESS_OUTPUT_CHARS,
        "is_error": result.is_error,
    }


def _function_call(event: _Events, index: int, item: Item) -> list[bytes]:
    where = {"item_id": item["id"], "output_index": index}
    return [
        event(
            "response.output_item.added",
            output_index=index,
            item={**item, "arguments": "", "status": "in_progress"},
        ),
        event("response.function_call_arguments.delta", **where, delta=item["arguments"]),
        event(
            "response.function_call_arguments.done",
            **where,
            name=item["name"],
            arguments=item["arguments"],
        ),
    ]


def _streamed_call_done(event: _Events, index: int, item: Item, sent: str) -> list[bytes]:
    """The end of a call whose arguments were streamed (``sent``): what the final
    call adds (an empty stream settled as ``{}``), then its arguments done."""
    where = {"item_id": item["id"], "output_index": index}
    arguments = item["arguments"]
    events = []
    if len(arguments) > len(sent) and arguments.startswith(sent):
        rest = arguments[len(sent) :]
        events.append(event("response.function_call_arguments.delta", **where, delta=rest))
    done = event(
        "response.function_call_arguments.done", **where, name=item["name"], arguments=arguments
    )
    return [*events, done]


def _text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def failure(error: OpenAIError) -> dict[str, str]:
    """A response's ``error``: its code is one of the few the Responses API defines."""
    code = (
        "rate_limit_exceeded"
        if error.status == 429
        else "invalid_prompt"
        if error.status < 500
        else "server_error"
    )
    return {"code": code, "message": error.message}
