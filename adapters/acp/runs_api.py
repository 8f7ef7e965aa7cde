"""The run endpoints: create, read, resume, cancel, and list a run's events.

Each answer carries the run's id in a ``Run-ID`` header. A ``sync`` or
``stream`` request whose client goes away cancels its run (nobody is left to
read it); an ``async`` run lives on until it ends, is cancelled or expires.
A ``stream`` run waits while its client does not read
(:mod:`agenthost.adapters.handoffs`): its events do not pile up unsent.
``async`` and ``stream`` runs are durable runs
(:mod:`agenthost.adapters.acp.detached`): a replica that dies mid-run leaves
its run to another, which finishes it.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing

from acp_sdk.models import (
    Run,
    RunCancelledEvent,
    RunCreatedEvent,
    RunCreateRequest,
    RunMode,
    RunResumeRequest,
    RunStatus,
)
from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.acp import execution
from agenthost.adapters.acp.convert import from_acp_messages, text_of
from agenthost.adapters.acp.detached import DetachedRuns
from agenthost.adapters.acp.errors import ACPProblem, not_found, read_body
from agenthost.adapters.acp.runs import RunRecord, RunStore
from agenthost.adapters.acp.shared import SharedRuns
from agenthost.adapters.base import AdapterContext, principal_of
from agenthost.adapters.disconnect import unless_disconnected
from agenthost.adapters.handoffs import HandOff, read
from agenthost.adapters.runs import resume_input
from agenthost.adapters.sse import event_stream
from agenthost.agents import Agent, SessionKey, TextPart
from agenthost.agents import Message as AgentMessage
from agenthost.agents.errors import ClientGone

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class RunsAPI:
    """What the run routes do, over one adapter's context and run store."""

    def __init__(
        self,
        context: AdapterContext,
        store: RunStore,
        shared: SharedRuns | None = None,
        detached: DetachedRuns | None = None,
    ) -> None:
        self.context = context
        self.store = store
        self.shared = shared
        self.detached = detached or DetachedRuns(context, store, shared)

    async def create(self, request: Request) -> Response:
        body = await read_body(request, RunCreateRequest)
        principal = principal_of(request)
        agent = self._agent(principal, body.agent_name)
        if body.session and body.session_id and body.session.id != body.session_id:
            raise ACPProblem(400, "session_id and session.id differ")
        # The acp-sdk client sends a whole session object on its first run in
        # a session; its history (URLs on other servers) is not fetched: the
        # conversation is what this server keeps for the session.
        session_id = body.session_id or (body.session.id if body.session else uuid.uuid4())
        input = from_acp_messages(body.input)
        run = Run(agent_name=agent.name, session_id=session_id)
        # Interned: every run of the session (and its conversation's key) shares one string.
        key = SessionKey(agent.name, sys.intern(str(session_id)), principal)
        record = RunRecord(run, principal, key)
        self.store.add(record)
        hand_off = _stream_hand_off(record, body.mode)
        try:
            record.emit(RunCreatedEvent(run=run))
            if body.mode == RunMode.SYNC:
                execution.start(record, agent, self.context.memory, input, self.shared)
            else:  # nobody waits on the request for it: a durable run
                await self.detached.start(record, agent, input)
            if self.shared is not None:
                await self.shared.save(record)  # before any replica is told its id
        except BaseException:
            if hand_off is not None:  # no stream will read it
                hand_off.close()
            raise
        return await _answer(request, record, body.mode, start=0)

    async def read(self, request: Request, run_id: str) -> Response:
        return _run_response(await self._record(request, run_id))

    async def events(self, request: Request, run_id: str) -> Response:
        record = await self._record(request, run_id)
        body = b'{"events":' + record.events.json_array() + b"}"
        return Response(body, headers=_run_headers(record), media_type="application/json")

    async def resume(self, request: Request, run_id: str) -> Response:
        body = await read_body(request, RunResumeRequest)
        record = await self._record(request, run_id)
        if record.run.status != RunStatus.AWAITING:
            raise ACPProblem(409, f"run {run_id} is {record.run.status.value}, not awaiting input")
        agent = self._agent(record.principal, record.run.agent_name)
        answer = AgentMessage(
            role="user", parts=[TextPart(text=text_of(body.await_resume.message))]
        )
        reply = resume_input(record.pending, answer)
        start = len(record.events)
        self.store.add(record)  # this replica runs it from now on
        hand_off = _stream_hand_off(record, body.mode)
        execution.start(record, agent, self.context.memory, [reply], self.shared)
        if self.shared is not None:
            try:
                await self.shared.save(record)
            except BaseException:
                if hand_off is not None:
                    hand_off.close()
                raise
        return await _answer(request, record, body.mode, start=start)

    async def cancel(self, request: Request, run_id: str) -> Response:
        record = await self._record(request, run_id)
        if record.run.status.is_terminal:
            raise ACPProblem(409, f"run {run_id} is already {record.run.status.value}")
        if record.busy:
            record.run.status = RunStatus.CANCELLING
            _stop(record)
        elif record.run.status != RunStatus.AWAITING and self.shared is not None:
            # It works on another replica: that one stops it and records it.
            record.run.status = RunStatus.CANCELLING
            await self.shared.cancel(record.principal, record.run_id)
            if record.durable:  # its replica also reads it in the run log at its next renewal
                await self.context.durable.cancel(record.run_id)
        else:  # awaiting: no work to stop
            record.settle(RunStatus.CANCELLED)
            record.emit(RunCancelledEvent(run=record.run))
            if self.shared is not None:
                await self.shared.save(record)
        return _run_response(record, 202)

    async def cancel_here(self, principal: str, run_id: str) -> None:
        """A cancel sent by another replica: stop the run if it works here."""
        record = self.store.get(principal, run_id)
        if record is not None and record.busy:
            record.run.status = RunStatus.CANCELLING
            _stop(record)

    def _agent(self, principal: str, name: str) -> Agent:
        agent = self.context.find_agent(principal, name)
        if agent is None:
            raise not_found("agent", name)
        return agent

    async def _record(self, request: Request, run_id: str) -> RunRecord:
        """The run: this replica's record while it works here, else the shared snapshot."""
        principal = principal_of(request)
        record = self.store.get(principal, run_id)
        id = _uuid_or_none(run_id)
        if self.shared is not None and id is not None and (record is None or not record.busy):
            stored = await self.shared.load(principal, str(id))
            if stored is not None:
                stored = await self.shared.fail_if_orphaned(stored)
                if record is None:
                    return stored
                record.adopt(stored)
        if record is None:
            raise not_found("run", run_id)
        return record


def _stream_hand_off(record: RunRecord, mode: RunMode) -> HandOff | None:
    """For a ``stream`` request, the hand-off its run waits on from its first event."""
    if mode != RunMode.STREAM:
        return None
    record.hand_off = HandOff()
    return record.hand_off


def _uuid_or_none(run_id: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(run_id)
    except ValueError:
        return None


async def _answer(request: Request, record: RunRecord, mode: RunMode, *, start: int) -> Response:
    if mode == RunMode.STREAM:
        assert record.hand_off is not None
        events = _sse(record, start, record.hand_off)
        return event_stream(events, {**SSE_HEADERS, **_run_headers(record)})
    if mode == RunMode.SYNC:
        try:
            await unless_disconnected(request.receive, record.finished())
        except ClientGone:
            _stop(record)
            raise
        return _run_response(record)
    return _run_response(record, 202)


async def _sse(record: RunRecord, start: int, hand_off: HandOff) -> AsyncIterator[bytes]:
    try:
        async with aclosing(read(record.follow(start), hand_off)) as events:
            async for event in events:
                yield b"data: " + event + b"\n\n"
    finally:
        # Reached early only when the client left (or the server stops).
        if record.hand_off is hand_off:
            record.hand_off = None
        _stop(record)


def _stop(record: RunRecord) -> None:
    # A settled run's task only records how it ended (a durable run's: in the run log).
    if record.task is not None and not record.task.done() and not record.settled:
        record.task.cancel()


def _run_headers(record: RunRecord) -> dict[str, str]:
    return {"Run-ID": record.run_id}


def _run_response(record: RunRecord, status: int = 200) -> Response:
    return Response(
        record.run_json(),
        status,
        headers=_run_headers(record),
        media_type="application/json",
    )
