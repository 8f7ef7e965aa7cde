"""``/responses``: create (streamed or not), retrieve and delete stored responses.

A stored response keeps the whole transcript up to and including it, so
``previous_response_id`` continues from one lookup. Response ids are random
and made by the server, so they are stored in one scope of their own rather
than per agent; a chain may switch agents, as with OpenAI's models.
``conversation`` names a session of the agent instead, kept in the same
memory manager under ``(agent, conversation)``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response

from adapters.disconnect import unless_disconnected
from adapters.openai.convert_responses import (
    check_supported,
    message_item,
    output_text,
    to_response,
    to_run,
)
from adapters.openai.errors import OpenAIError, from_exception
from adapters.openai.http import (
    find_agent,
    json_response,
    read_body,
    sse_event,
    sse_response,
    started,
)
from adapters.openai.schemas import ResponseRequest
from agents import (
    Agent,
    InMemorySession,
    MemoryManager,
    Message,
    RunFinished,
    RunResult,
    RunUpdate,
    SessionKey,
    TextDelta,
)

RESPONSES_SCOPE = "responses"


def response_key(response_id: str, principal: str) -> SessionKey:
    return SessionKey(RESPONSES_SCOPE, response_id, principal)


@dataclass
class _Turn:
    """One response being made: its ids, its request and where it is saved."""

    request: ResponseRequest
    agent: Agent
    memory: MemoryManager
    principal: str
    history: list[Message]
    id: str = field(default_factory=lambda: f"resp_{uuid.uuid4().hex}")
    message_id: str = field(default_factory=lambda: f"msg_{uuid.uuid4().hex}")
    created_at: int = field(default_factory=lambda: int(time.time()))

    def response(self, result: RunResult | None = None, **kwargs: Any) -> dict[str, Any]:
        return to_response(
            self.request,
            id=self.id,
            created_at=self.created_at,
            model=self.agent.name,
            result=result,
            **kwargs,
        )

    def completed(self, result: RunResult) -> dict[str, Any]:
        return self.response(result, output=[message_item(self.message_id, result.output)])

    async def save(self, result: RunResult, response: dict[str, Any]) -> None:
        # Shielded: a client leaving now must not leave half a turn saved.
        with anyio.CancelScope(shield=True):
            conversation = self.request.conversation
            if conversation is not None:
                id = conversation if isinstance(conversation, str) else conversation.id
                key = SessionKey(self.agent.name, id, self.principal)
                await self.memory.append(key, result.new_messages)
            if self.request.store:
                await self.memory.append(
                    response_key(self.id, self.principal),
                    [*self.history, *result.new_messages],
                    meta={"response": response, "agent": self.agent.name},
                )


async def create_response(
    request: Request, agents: Mapping[str, Agent], memory: MemoryManager, principal: str
) -> Response:
    body = await read_body(request, ResponseRequest)
    agent = find_agent(agents, body.model)
    check_supported(body, agent)
    messages, options = to_run(body)
    history = await _history(body, agent, memory, principal)
    turn = _Turn(body, agent, memory, principal, history)
    session = InMemorySession(turn.history)
    if not body.stream:
        run = agent.run(messages, session=session, options=options)
        result = await unless_disconnected(request.receive, run)
        response = turn.completed(result)
        await turn.save(result, response)
        return json_response(response)
    updates = await started(agent.run_stream(messages, session=session, options=options))
    return sse_response(_stream(turn, updates))


async def _history(
    body: ResponseRequest, agent: Agent, memory: MemoryManager, principal: str
) -> list[Message]:
    if body.previous_response_id:
        stored = await memory.get(response_key(body.previous_response_id, principal))
        if stored is None:
            raise OpenAIError(
                400,
                f"Previous response with id '{body.previous_response_id}' not found.",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        return list(stored.messages)
    if body.conversation is not None:
        id = body.conversation if isinstance(body.conversation, str) else body.conversation.id
        stored = await memory.get(SessionKey(agent.name, id, principal))
        return list(stored.messages) if stored else []
    return []


async def _stream(turn: _Turn, updates: AsyncGenerator[RunUpdate, None]) -> AsyncIterator[bytes]:
    sequence = 0

    def event(type: str, **fields: Any) -> bytes:
        nonlocal sequence
        data = {"type": type, "sequence_number": sequence, **fields}
        sequence += 1
        return sse_event(data)

    where = {"item_id": turn.message_id, "output_index": 0, "content_index": 0}
    try:
        yield event("response.created", response=turn.response(status="in_progress"))
        yield event("response.in_progress", response=turn.response(status="in_progress"))
        item = message_item(turn.message_id, None, status="in_progress")
        yield event("response.output_item.added", output_index=0, item=item)
        yield event("response.content_part.added", **where, part=output_text(""))
        async for update in updates:
            if isinstance(update, TextDelta):
                yield event("response.output_text.delta", **where, delta=update.text, logprobs=[])
            elif isinstance(update, RunFinished):
                result = update.result
                response = turn.completed(result)
                await turn.save(result, response)
                yield event("response.output_text.done", **where, text=result.output, logprobs=[])
                yield event("response.content_part.done", **where, part=output_text(result.output))
                yield event("response.output_item.done", output_index=0, item=response["output"][0])
                yield event(f"response.{response['status']}", response=response)
    except Exception as exc:
        error = from_exception(exc)
        yield event("error", code=error.code, message=error.message, param=error.param)
        failed = turn.response(
            status="failed", error={"code": error.code or "server_error", "message": error.message}
        )
        yield event("response.failed", response=failed)
    finally:
        await updates.aclose()


async def get_response(response_id: str, memory: MemoryManager, principal: str) -> Response:
    stored = await memory.get(response_key(response_id, principal))
    if stored is None:
        raise _not_found(response_id)
    return json_response(stored.meta["response"])


async def delete_response(response_id: str, memory: MemoryManager, principal: str) -> Response:
    if not await memory.delete(response_key(response_id, principal)):
        raise _not_found(response_id)
    return json_response({"id": response_id, "object": "response.deleted", "deleted": True})


def _not_found(response_id: str) -> OpenAIError:
    return OpenAIError(
        404, f"Response with id '{response_id}' not found.", param="response_id", code="not_found"
    )
