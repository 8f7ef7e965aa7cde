"""The shared run consumer: hooks in order, the result check, closing; what a reply resumes."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence

import pytest

from agenthost.adapters.runs import RunConsumer, pending_in, resume_input
from agenthost.agents import (
    Message,
    RunFinished,
    RunIncomplete,
    RunResult,
    RunUpdate,
    SubAgentUpdate,
    TextDelta,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
)
from agenthost.agents.models.testing import call

pytestmark = pytest.mark.anyio


class Recorder(RunConsumer[str]):
    """Says which hook ran, as its output."""

    async def on_start(self) -> Sequence[str]:
        return ("start",)

    async def on_text(self, text: str) -> Sequence[str]:
        return (f"text {text}",)

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[str]:
        return (f"tool {call.name}",)

    async def on_sub_agent(self, update: SubAgentUpdate) -> Sequence[str]:
        return (f"sub {update.agent}",)

    async def on_finished(self, result: RunResult) -> Sequence[str]:
        return (f"finished {result.output}",)

    async def on_pending(self, result: RunResult) -> Sequence[str]:
        return (f"pending {len(result.pending)}",)


class Updates:
    """A run's updates that remembers whether it was closed."""

    def __init__(self, *updates: RunUpdate, fail: Exception | None = None) -> None:
        self.updates, self.fail, self.closed = updates, fail, False

    async def __call__(self) -> AsyncGenerator[RunUpdate, None]:
        try:
            for update in self.updates:
                yield update
            if self.fail is not None:
                raise self.fail
        finally:
            self.closed = True


def finished(output: str, pending: Sequence[ToolCallPart] = ()) -> RunFinished:
    return RunFinished(RunResult(output, [], pending=list(pending)))


async def pulled(consumer: RunConsumer[str], updates: AsyncGenerator[RunUpdate, None]) -> list[str]:
    return [o async for o in consumer.stream(updates)]


async def written(
    consumer: RunConsumer[str], updates: AsyncGenerator[RunUpdate, None]
) -> list[str]:
    out: list[str] = []

    async def write(event: str) -> None:
        out.append(event)

    await consumer.events(updates).write_to(write)
    return out


Outputs = Callable[[RunConsumer[str], AsyncGenerator[RunUpdate, None]], Awaitable[list[str]]]
# The two ways a response takes a run's output: iterating it, or handing it a writer.
BOTH_WAYS = pytest.mark.parametrize("outputs", [pulled, written], ids=["stream", "send_to"])


@BOTH_WAYS
async def test_hooks_run_in_order_and_the_updates_are_closed(outputs: Outputs) -> None:
    run = Updates(
        TextDelta("a"),
        ToolCallStarted(call("search", "{}")),
        SubAgentUpdate("helper", TextDelta("b")),
        finished("a"),
    )
    updates = run()
    consumer = Recorder("x")
    out = await outputs(consumer, updates)
    assert out == ["start", "text a", "tool search", "sub helper", "finished a"]
    assert consumer.result is not None and consumer.result.output == "a"
    assert run.closed


@BOTH_WAYS
async def test_a_run_waiting_for_its_client_ends_with_on_pending(outputs: Outputs) -> None:
    updates = Updates(finished("", [call("ask_user", '{"question": "?"}')]))()
    assert await outputs(Recorder("x"), updates) == ["start", "pending 1"]


async def test_a_run_without_its_result_is_incomplete() -> None:
    run = Updates(TextDelta("a"))
    with pytest.raises(RunIncomplete, match="agent 'x' ended without a result"):
        await Recorder("x").consume(run())
    assert run.closed


class Reporting(Recorder):
    async def on_error(self, exc: Exception) -> Sequence[str]:
        return (f"error {exc}",)


@BOTH_WAYS
async def test_a_failure_reaches_on_error_and_the_updates_are_closed(outputs: Outputs) -> None:
    run = Updates(TextDelta("a"), fail=ValueError("boom"))
    out = await outputs(Reporting("x"), run())
    assert out == ["start", "text a", "error boom"] and run.closed


async def test_a_writer_that_fails_stops_the_run_without_on_error() -> None:
    # The client gone mid-stream: its error is the writer's, not the run's to report.
    run = Updates(TextDelta("a"), TextDelta("b"), finished("ab"))
    out: list[str] = []

    async def write(event: str) -> None:
        if event == "text a":
            raise ConnectionResetError("gone")
        out.append(event)

    with pytest.raises(ConnectionResetError):
        await Reporting("x").send_to(run(), write)
    assert out == ["start"] and run.closed


async def test_a_caller_that_stops_reading_closes_the_updates() -> None:
    run = Updates(TextDelta("a"), TextDelta("b"), finished("ab"))
    events = Recorder("x").stream(run())
    assert [await anext(events), await anext(events)] == ["start", "text a"]
    await events.aclose()  # type: ignore[attr-defined]
    assert run.closed


async def test_the_stream_starts_before_the_run_gives_its_first_update() -> None:
    started = False

    async def slow_run() -> AsyncGenerator[RunUpdate, None]:
        nonlocal started
        started = True
        yield finished("late")

    events = Recorder("x").stream(slow_run())
    assert await anext(events) == "start" and not started  # a slow first token waits behind
    assert [o async for o in events] == ["finished late"]


def test_pending_calls_are_the_unanswered_ones_of_the_last_assistant_turn() -> None:
    ask, own = call("ask_user", '{"question": "?"}'), call("calculator", "{}")
    waiting = Message(role="assistant", parts=[own, ask])
    answered_own = Message(
        role="tool", parts=[ToolResultPart(call_id=own.id, name="calculator", content="4")]
    )
    assert pending_in([Message.user("hi"), waiting, answered_own]) == [ask]
    assert pending_in([Message.user("hi"), waiting]) == [own, ask]
    assert pending_in([waiting, answered_own, Message.user("new question")]) == []
    assert pending_in([Message.user("hi"), Message.assistant("hello")]) == []
    assert pending_in([]) == []


def test_a_reply_answers_what_is_pending_or_is_a_new_turn() -> None:
    ask = call("ask_user", '{"question": "Which city?"}')
    reply = Message(role="user", parts=Message.user("Paris").parts, id="m-2")
    answer = resume_input([ask], reply)
    assert answer.role == "tool" and answer.id == "m-2"
    assert answer.parts == [ToolResultPart(call_id=ask.id, name="ask_user", content="Paris")]
    assert resume_input([], reply) is reply
