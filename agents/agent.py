"""The uniform agent every adapter serves, whatever built it.

Every run is bounded (:mod:`agents.limits`): output size, duration, and the
server's shutdown end it with one clean error.

An agent has one run entry: :meth:`Agent.run_stream` yields updates and ends
with :class:`~agents.results.RunFinished`; :meth:`Agent.run` returns the same
final result without the updates. The session is loaded before the run and
the turn is appended only when the run finishes, so a run that is cancelled
(client gone, protocol cancel) or fails leaves no half-saved turn.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from functools import partial
from typing import Any, Protocol, Self, runtime_checkable

from agenthost.agents.hosting import UNHOSTED, Hosting
from agenthost.agents.limits import RunBound, RunLimits
from agenthost.agents.messages import Message, MessageInput, to_messages
from agenthost.agents.options import RunOptions
from agenthost.agents.results import RunFinished, RunResult, RunUpdate
from agenthost.agents.sessions import Session, conversation_of
from agenthost.agents.shields import save_shield


@runtime_checkable
class Agent(Protocol):
    """What every adapter relies on."""

    name: str
    description: str

    @property
    def supports_response_format(self) -> bool: ...

    def run_stream(
        self,
        input: MessageInput,
        *,
        session: Session | None = None,
        options: RunOptions | None = None,
    ) -> AsyncGenerator[RunUpdate, None]: ...

    async def run(
        self,
        input: MessageInput,
        *,
        session: Session | None = None,
        options: RunOptions | None = None,
    ) -> RunResult: ...

    def lifespan(self) -> AbstractAsyncContextManager[Any]: ...


class BaseAgent:
    """Session handling and option merging; subclasses implement :meth:`_run`."""

    # (agent options, run options, their merge): the last merge, reused while a run
    # passes the same frozen options object again (an adapter shares one for the
    # requests that set none). A merge builds two dataclasses (~6 µs a run).
    _last_merge: tuple[RunOptions, RunOptions, RunOptions] | None = None

    def __init__(
        self,
        name: str,
        description: str = "",
        options: RunOptions | None = None,
        limits: RunLimits | None = None,
        *,
        hosting: Hosting | None = None,
    ):
        """``hosting``: the host's bounds and observers (:mod:`agents.hosting`); none
        given, the agent runs under its own ``limits`` only, unwatched."""
        self.name = name
        self.description = description
        self.options = options or RunOptions()
        self.limits = limits or RunLimits()
        self.hosting = hosting or UNHOSTED

    @property
    def supports_response_format(self) -> bool:
        return False

    def served(self, hosting: Hosting, serve: Callable[[Agent], Agent] | None = None) -> Self:
        """This agent as ``hosting`` serves it: a copy made under the host's bounds and
        observers (its own ``limits`` still win). This object is left as it was.

        ``serve`` gives the served form of each agent this one runs (pipeline steps,
        handoffs), so that they are watched and bounded too; by default
        :func:`serving` ``(hosting)``. Subclasses that hold agents or observers
        override :meth:`_served_copy`.
        """
        if serve is None:
            serve = serving(hosting)
        return self._served_copy(hosting, serve)

    def _served_copy(self, hosting: Hosting, serve: Callable[[Agent], Agent]) -> Self:
        """A shallow copy under ``hosting``; what it composes mapped through ``serve``.

        The one place a served agent is finished after ``copy``: the copy is new and
        nobody holds it yet.
        """
        agent = copy.copy(self)
        agent.hosting = hosting
        return agent

    def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        """Yield the run's updates; the last one is ``RunFinished``.

        With ``stream=False`` only ``RunFinished`` is needed.
        """
        raise NotImplementedError

    def _session_turn(
        self,
        history: list[Message],
        input: list[Message],
        options: RunOptions,
        *,
        stream: bool,
        session: Session | None,
    ) -> AsyncIterator[RunUpdate]:
        """:meth:`_run`, for agents that also keep notes with the session (a memory summary).

        The history is already loaded and the turn is appended by the caller.
        """
        return self._run(history, input, options, stream=stream)

    def run_stream(
        self,
        input: MessageInput,
        *,
        session: Session | None = None,
        options: RunOptions | None = None,
    ) -> AsyncGenerator[RunUpdate, None]:
        # One generator between the turn and the caller: the bound's own, which opens the
        # turn and hands the result to _finish (no session layer around the turn).
        bound = self.hosting.bound(self.limits, self.name, conversation_of(session))
        start = partial(self._open_turn, input, session, options, stream=True)
        return bound.stream(start, partial(self._finish, bound, session))

    async def run(
        self,
        input: MessageInput,
        *,
        session: Session | None = None,
        options: RunOptions | None = None,
    ) -> RunResult:
        bound = self.hosting.bound(self.limits, self.name, conversation_of(session))
        return await bound.result(self._drain(input, session, options, bound))

    async def _drain(
        self,
        input: MessageInput,
        session: Session | None,
        options: RunOptions | None,
        bound: RunBound,
    ) -> RunResult:
        result: RunResult | None = None
        turn = await self._open_turn(input, session, options, stream=False)
        # Drained to the end (not left suspended), so no generator is left
        # for the event loop to finalise.
        async for update in turn:
            if isinstance(update, RunFinished):
                result = update.result
                await self._finish(bound, session, result)
        if result is None:
            raise RuntimeError(f"agent {self.name!r} ended without a result")
        return result

    async def _open_turn(
        self,
        input: MessageInput,
        session: Session | None,
        options: RunOptions | None,
        *,
        stream: bool,
    ) -> AsyncIterator[RunUpdate]:
        """The turn's updates, its session loaded (the bound waits for this too)."""
        messages = to_messages(input)
        history = await session.load() if session is not None else []
        merged = self._merged_options(options)
        return self._session_turn(history, messages, merged, stream=stream, session=session)

    def _merged_options(self, options: RunOptions | None) -> RunOptions:
        """This agent's options with ``options``' over them (:meth:`RunOptions.merged`)."""
        last = self._last_merge
        if last is not None and last[1] is options and last[0] is self.options:
            return last[2]
        merged = self.options.merged(options)
        # Kept only where the merge cannot go stale: every field of a RunOptions is
        # immutable but ``tools``, which the merge copies into a tuple.
        if options is not None and isinstance(options.tools, tuple | None):
            self._last_merge = (self.options, options, merged)
        return merged

    async def _finish(self, bound: RunBound, session: Session | None, result: RunResult) -> None:
        """A finished run's checks and save, before its result is delivered."""
        # An answer over the bound is refused before it is saved.
        bound.check_output(result.output)
        if session is not None:
            # Shielded: a cancel arriving now must not leave half a turn.
            with bound.protected(), save_shield():
                await session.append(result.new_messages)

    def lifespan(self) -> AbstractAsyncContextManager[Any]:
        return nullcontext()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def serving(hosting: Hosting) -> Callable[[Agent], Agent]:
    """Agent → the same agent served under ``hosting``: agents built under it as they
    are, a copy of any other :class:`BaseAgent` (one per agent, so that a step shared
    by two pipelines stays one agent), anything else as it is."""
    done: dict[int, Agent] = {}

    def serve(agent: Agent) -> Agent:
        if not isinstance(agent, BaseAgent) or agent.hosting is hosting:
            return agent
        served = done.get(id(agent))
        if served is None:
            served = done[id(agent)] = agent._served_copy(hosting, serve)
        return served

    return serve


def transcript(
    instructions: str | None, history: Sequence[Message], input: Sequence[Message]
) -> list[Message]:
    """What the model sees: instructions as a system message, then the conversation."""
    head = [Message.system(instructions)] if instructions else []
    return [*head, *history, *input]
