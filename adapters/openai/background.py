"""Background responses (``background: true``): runs that outlive their request and replica.

A background response is a durable run (:mod:`agenthost.adapters.durable`):
its request answers at once (``queued``; or its stream, when ``stream`` is
true), the run goes on in a task of its own, and the response is stored when
it settles (``completed``, ``failed`` or ``cancelled``), on whichever
replica ends it. Any replica answers ``GET /v1/responses/{id}`` (the run as
it stands), ``GET /v1/responses/{id}?stream=true&starting_after=N`` (the
events after sequence number ``N``, replayed from the run's log and then
followed; the numbers are the same on every replica and every replay) and
``POST /v1/responses/{id}/cancel``.

A run resumed on another replica after its own died first shows what the
lost step had streamed as discarded: the message item that step was
writing is closed ``incomplete`` and the rest of the answer follows in a new
message item (see :meth:`ResponseEvents.on_discarded`); the final
``response.completed`` holds the whole answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import suppress
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.durable import DurableRuns, RunRecord
from agenthost.adapters.openai.errors import OpenAIError, from_exception
from agenthost.adapters.openai.http import json_response, sse_response
from agenthost.adapters.openai.responses_stream import ResponseEvents, failure
from agenthost.adapters.openai.schemas import ResponseRequest
from agenthost.adapters.openai.turns import Prepared, Stores, Turn, prepare
from agenthost.agents import Agent, Message, RunCancelled, RunResult, RunUpdate
from agenthost.agents.errors import AgentError

PROTOCOL = "openai.responses"
"""The kind of run a background response is, in the run log."""

CANCEL_WAIT = 5.0
"""Seconds a cancel waits for the run to stop before answering with it as it stands."""


class BackgroundResponses:
    """How the durable runs run a background response (a
    :class:`~agenthost.adapters.durable.RunKind`), on any replica."""

    def __init__(self, agents: Mapping[str, Agent], stores: Stores) -> None:
        self.agents = agents
        self.stores = stores

    async def prepared(self, record: RunRecord) -> Prepared:
        request = record.request
        body = ResponseRequest.model_validate(request["body"])
        agent = self.agents.get(record.agent)
        if agent is None:
            raise OpenAIError(404, f"the agent {record.agent!r} is no longer served")
        return await prepare(
            body,
            agent,
            self.stores,
            record.principal,
            id=record.id,
            created_at=request["created_at"],
            items=request["items"],
        )

    async def updates(
        self, record: RunRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        prepared = await self.prepared(record)
        turn = prepared.turn
        return turn.agent.run_stream(
            [*prepared.messages, *done], session=prepared.session, options=turn.options
        )

    async def settled(
        self, record: RunRecord, result: RunResult | None, error: BaseException | None
    ) -> None:
        turn = (await self.prepared(record)).turn
        if result is not None:
            await turn.save(turn.completed(result))
            return
        if isinstance(error, RunCancelled):
            response = turn.response(status="cancelled")
        else:
            assert error is not None
            exc = error if isinstance(error, Exception) else RuntimeError(str(error))
            response = turn.response(status="failed", error=failure(from_exception(exc)))
        await self.stores.responses.save(turn.principal, response, turn.input)


async def start(prepared: Prepared, runs: DurableRuns, *, stream: bool) -> Response:
    """Start a background response: its stream, or the response ``queued``."""
    turn = prepared.turn
    if not turn.request.store:
        raise OpenAIError(400, "background responses must be stored (store: true)", param="store")
    request = {
        "body": turn.request.model_dump(mode="json", exclude_unset=True),
        "items": turn.input,
        "created_at": turn.created_at,
    }
    record = RunRecord(turn.id, PROTOCOL, turn.agent.name, turn.principal, request)
    await runs.start(record)
    if stream:
        return sse_response(_view(runs, turn, None))
    return json_response(turn.response(status="queued"))


def _kind(runs: DurableRuns) -> BackgroundResponses:
    kind = runs.kinds[PROTOCOL]
    assert isinstance(kind, BackgroundResponses)
    return kind


async def _record(id: str, runs: DurableRuns, principal: str) -> RunRecord | None:
    record = await runs.log.get(id)
    if record is None or record.protocol != PROTOCOL or record.principal != principal:
        return None
    return record


async def current(id: str, runs: DurableRuns, stores: Stores, principal: str) -> Any:
    """A background response as it stands (None: no such background response)."""
    record = await _record(id, runs, principal)
    if record is None:
        return None
    stored = await stores.responses.get(principal, id)
    if stored is not None:
        return stored.response
    turn = (await _kind(runs).prepared(record)).turn
    status = record.status if record.status in ("queued", "in_progress") else "in_progress"
    return turn.response(status=status)


async def follow(
    request: Request, id: str, runs: DurableRuns, stores: Stores, principal: str
) -> Response:
    """``GET /responses/{id}?stream=true[&starting_after=N]``."""
    raw = request.query_params.get("starting_after")
    if raw is not None and not raw.isdigit():
        raise OpenAIError(400, "starting_after must be a sequence number", param="starting_after")
    record = await _record(id, runs, principal)
    if record is None:
        if await stores.responses.get(principal, id) is not None:
            raise OpenAIError(
                400,
                "only a background response can be streamed again",
                param="stream",
                code="invalid_value",
            )
        raise OpenAIError(
            404, f"Response with id '{id}' not found.", param="response_id", code="not_found"
        )
    turn = (await _kind(runs).prepared(record)).turn
    return sse_response(_view(runs, turn, int(raw) if raw is not None else None))


async def cancel(id: str, runs: DurableRuns, stores: Stores, principal: str) -> Any:
    """Stop a background response; it as it stands once stopped (or after
    :data:`CANCEL_WAIT`); None: no such background response."""
    record = await _record(id, runs, principal)
    if record is None:
        if await stores.responses.get(principal, id) is not None:
            raise OpenAIError(
                400, "only a background response can be cancelled", param="response_id"
            )
        return None
    if not record.settled:
        await runs.cancel(id)
        with suppress(TimeoutError, AgentError):  # its end: cancelled, or done meanwhile
            async with asyncio.timeout(CANCEL_WAIT):
                async for _ in runs.follow(id):
                    pass
    return await current(id, runs, stores, principal)


class _Replayed(ResponseEvents):
    """A background response's events: it ends with the response as stored when its run
    settled (the same on every replica and every replay, ``completed_at`` included)."""

    async def completed(self, result: RunResult) -> dict[str, Any]:
        turn = self.turn
        stored = await turn.stores.responses.get(turn.principal, turn.id)
        if stored is not None and stored.response.get("status") == "completed":
            return dict(stored.response)
        return turn.completed(result)


async def _view(runs: DurableRuns, turn: Turn, after: int | None) -> AsyncIterator[bytes]:
    """The response's events from its log, those numbered after ``after`` only."""
    events = _Replayed(turn.agent.name, turn, saving=False, starting_after=after)
    async for out in events.stream(runs.updates(turn.id)):  # type: ignore[arg-type]
        if out:
            yield out
