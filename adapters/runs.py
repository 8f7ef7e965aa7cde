"""One consumer of a run's updates, shared by every adapter; and what a reply resumes.

:class:`RunConsumer` owns the loop over ``agent.run_stream(...)``: it calls
one hook per update, checks that the run ends with its
:class:`~agenthost.agents.RunFinished` result (:class:`RunIncomplete`
otherwise), and closes the updates however the loop ends (a cancel, an
error, the caller leaving), which is what stops the model call and tools.
Adapters subclass it and override the hooks they need; each hook returns
what to send (``Out``: bytes of an SSE stream), or nothing for adapters
that send from the hook itself.

Hooks are awaited straight from the one loop, with no task or extra
generator per update: the streamed ``/v1`` path runs through it per token.
An adapter whose text events need no await defines :attr:`RunConsumer.text_events`
(a plain method) instead of :meth:`RunConsumer.on_text`: the loop calls it
without making a coroutine per text chunk.
:meth:`RunConsumer.events` hands that loop to the response itself
(:class:`RunEvents`, which :class:`~agenthost.adapters.sse.EventStream`
drives): each output is written as it is made, so between the agent's turn
and the socket there is one generator, the run's own (its bound, the session
save and the probe hooked into it), rather than one more per layer.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

from agenthost.adapters.durable.events import Discarded, LoggedUpdate
from agenthost.agents import (
    Message,
    ReasoningDelta,
    RunFinished,
    RunIncomplete,
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
    answer_pending,
)
from agenthost.agents.tools.approvals import as_asked

Out = TypeVar("Out")

_NOTHING: tuple[()] = ()


class RunConsumer(Generic[Out]):
    """Turns one run's updates into an adapter's output through hooks.

    Lifecycle: :meth:`stream` (or :meth:`consume`, which sends nothing)
    calls :meth:`on_start`, then :meth:`on_text`, :meth:`on_reasoning`,
    :meth:`on_tool_call_delta`,
    :meth:`on_tool_started`, :meth:`on_tool_finished`, :meth:`on_state` and
    :meth:`on_sub_agent` as updates arrive, then exactly one of
    :meth:`on_finished` or :meth:`on_pending` (the run waits for its client)
    with the result, or :meth:`on_error` when the run fails (by default the
    error propagates). Cancellation is never turned into output: it
    propagates after the updates are closed.
    """

    result: RunResult | None = None
    """The run's result, once it has one."""

    text_events: Callable[[str], Sequence[Out]] | None = None
    """A piece of the answer's text as output, made without awaiting: an adapter that
    defines it (a plain method) has it called instead of :meth:`on_text`, one coroutine
    less per text chunk (the hottest hook: one call per token)."""

    def __init__(self, agent: str) -> None:
        self.agent = agent

    async def on_start(self) -> Sequence[Out]:
        """Before the first update (the stream's opening events)."""
        return _NOTHING

    async def on_text(self, text: str) -> Sequence[Out]:
        """A piece of the answer's text (by default: :attr:`text_events`' output, if defined)."""
        text_events = self.text_events
        return _NOTHING if text_events is None else text_events(text)

    async def on_reasoning(self, text: str) -> Sequence[Out]:
        """A piece of the model's reasoning (only from a model whose upstream sends it;
        the whole of it is ``result.reasoning`` at the end, streamed or not)."""
        return _NOTHING

    async def on_tool_call_delta(self, delta: ToolCallDelta) -> Sequence[Out]:
        """A piece of a call the run will wait on the client for, as the model streams it
        (the whole call is in ``result.pending`` at the end, streamed or not)."""
        return _NOTHING

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[Out]:
        """The agent started one of its own tools."""
        return _NOTHING

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[Out]:
        """One of the agent's own tools finished (or failed: ``result.is_error``)."""
        return _NOTHING

    async def on_state(self, state: dict[str, Any]) -> Sequence[Out]:
        """The whole JSON state of a run that has one (a framework agent's), after a
        step; the last is the state it ended with (only AG-UI shows it)."""
        return _NOTHING

    async def on_sub_agent(self, update: SubAgentUpdate) -> Sequence[Out]:
        """An update of an agent working for this run (``tool_progress`` reads it)."""
        return _NOTHING

    async def on_discarded(self, lost: Discarded) -> Sequence[Out]:
        """A replica that died had streamed ``lost`` of a step it did not finish; the run
        goes on from its last finished step (only a durable run's log replays this)."""
        return _NOTHING

    async def on_finished(self, result: RunResult) -> Sequence[Out]:
        """The run ended with its answer."""
        return _NOTHING

    async def on_pending(self, result: RunResult) -> Sequence[Out]:
        """The run ended waiting for its client to answer ``result.pending``."""
        return await self.on_finished(result)

    async def on_error(self, exc: Exception) -> Sequence[Out]:
        """The run failed; what to send instead (by default: nothing, ``exc`` propagates)."""
        raise exc

    async def stream(self, updates: AsyncGenerator[LoggedUpdate, None]) -> AsyncIterator[Out]:
        """The output of the hooks, in order (:meth:`send_to` as an iterator, for a
        caller that pulls: a WebSocket, a replay).

        :meth:`on_start`'s output comes before the run is asked for its first
        update, so a stream starts at once however slow the first token; a run
        that fails before it goes to :meth:`on_error` like any other failure.
        """
        text_events = self.text_events
        try:
            for out in await self.on_start():
                yield out
            update = await anext(updates)
            while True:
                if isinstance(update, TextDelta):
                    text = update.text
                    outs = await self.on_text(text) if text_events is None else text_events(text)
                    for out in outs:
                        yield out
                elif isinstance(update, RunFinished):
                    self.result = result = update.result
                    hook = self.on_pending if result.pending else self.on_finished
                    for out in await hook(result):
                        yield out
                    return
                else:
                    for out in await self._other(update):
                        yield out
                update = await anext(updates)
        except StopAsyncIteration:
            for out in await self.on_error(
                RunIncomplete(f"agent {self.agent!r} ended without a result")
            ):
                yield out
        except Exception as exc:
            for out in await self.on_error(exc):
                yield out
        finally:
            await updates.aclose()

    async def send_to(
        self, updates: AsyncGenerator[LoggedUpdate, None], write: Callable[[Out], Awaitable[None]]
    ) -> RunResult | None:
        """The output of the hooks, in order, each given to ``write`` as it is made; the
        result (None if :meth:`on_error` handled a failure before it).

        The same loop as :meth:`stream` without being a generator itself (one layer
        less per update). A failure of ``write`` (the client gone) is the writer's:
        it propagates, never reaching :meth:`on_error`.
        """
        writing = False
        text_events = self.text_events
        try:
            for out in await self.on_start():
                writing = True
                await write(out)
                writing = False
            update = await anext(updates)
            while True:
                if isinstance(update, TextDelta):
                    text = update.text
                    outs = await self.on_text(text) if text_events is None else text_events(text)
                elif isinstance(update, RunFinished):
                    self.result = result = update.result
                    hook = self.on_pending if result.pending else self.on_finished
                    outs = await hook(result)
                    writing = True
                    for out in outs:
                        await write(out)
                    return result
                else:
                    outs = await self._other(update)
                writing = True
                for out in outs:
                    await write(out)
                writing = False
                update = await anext(updates)
        except StopAsyncIteration:
            outs = await self.on_error(
                RunIncomplete(f"agent {self.agent!r} ended without a result")
            )
        except Exception as exc:
            if writing:
                raise
            outs = await self.on_error(exc)
        finally:
            await updates.aclose()
        for out in outs:
            await write(out)
        return self.result

    async def consume(self, updates: AsyncGenerator[RunUpdate, None]) -> RunResult | None:
        """Run the hooks to the end, sending nothing; the result (None if :meth:`on_error`
        handled a failure)."""
        return await self.send_to(updates, _discard)

    def events(self, updates: AsyncGenerator[LoggedUpdate, None]) -> RunEvents[Out]:
        """The run's output as a response writes it (:meth:`send_to`), or iterates it."""
        return RunEvents(self, updates)

    async def _other(self, update: LoggedUpdate) -> Sequence[Out]:
        if isinstance(update, ReasoningDelta):
            return await self.on_reasoning(update.text)
        if isinstance(update, ToolCallDelta):
            return await self.on_tool_call_delta(update)
        if isinstance(update, ToolCallStarted):
            return await self.on_tool_started(update.call)
        if isinstance(update, ToolCallFinished):
            return await self.on_tool_finished(update.result)
        if isinstance(update, StateSnapshot):
            return await self.on_state(update.state)
        if isinstance(update, Discarded):
            return await self.on_discarded(update)
        assert isinstance(update, SubAgentUpdate)
        return await self.on_sub_agent(update)


class RunEvents(Generic[Out]):
    """One run's output through a consumer: written by the response that sends it
    (:meth:`write_to`, an :class:`~agenthost.adapters.sse.EventSource`), or iterated."""

    __slots__ = ("_consumer", "_updates")

    def __init__(
        self, consumer: RunConsumer[Out], updates: AsyncGenerator[LoggedUpdate, None]
    ) -> None:
        self._consumer, self._updates = consumer, updates

    async def write_to(self, write: Callable[[Out], Awaitable[None]]) -> None:
        await self._consumer.send_to(self._updates, write)

    def __aiter__(self) -> AsyncIterator[Out]:
        return self._consumer.stream(self._updates)

    async def aclose(self) -> None:
        """Close the run's updates (a response that never sends them: ``HEAD``)."""
        await self._updates.aclose()


async def _discard(out: object) -> None:
    pass


def pending_in(history: Sequence[Message]) -> list[ToolCallPart]:
    """The calls a stored conversation still waits for: those of its last
    assistant turn that no tool message answered since (none after a user turn)."""
    answered: set[str] = set()
    for message in reversed(history):
        if message.role == "user":
            return []
        if message.role == "tool":
            answered.update(p.call_id for p in message.parts if isinstance(p, ToolResultPart))
        elif message.role == "assistant" and message.tool_calls:
            waiting = [call for call in message.tool_calls if call.id not in answered]
            return as_asked(message, waiting)  # a call awaiting approval: its question
    return []


def resume_input(pending: Sequence[ToolCallPart], reply: Message) -> Message:
    """What a client's ``reply`` resumes: with calls ``pending`` (``ask_user``), the
    tool message answering each with the reply's text (and the reply's id);
    otherwise the reply itself, a new turn."""
    if not pending:
        return reply
    return answer_pending(pending, reply.text).model_copy(update={"id": reply.id})
