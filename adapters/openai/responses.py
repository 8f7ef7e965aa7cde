"""``/responses``: create (streamed or not), retrieve, delete, list input items.

A response continues an earlier one (``previous_response_id``: the chain's
transcript is rebuilt from its stored turns) or a conversation
(``conversation``: it must exist, see :mod:`adapters.openai.conversations`).
Response ids are random and made by the server, so responses are stored in
one scope of their own rather than per agent; a chain may switch agents,
as with OpenAI's models. Client tools end a response with ``function_call``
items; the next response answers them with ``function_call_output`` items.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.disconnect import unless_disconnected
from agenthost.adapters.openai.convert_responses import (
    check_supported,
    conversation_id,
    input_items,
    to_options,
    to_response,
)
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.http import (
    find_agent,
    json_response,
    read_body,
    sse_response,
)
from agenthost.adapters.openai.items import Item, new_id, output_items, page, to_messages
from agenthost.adapters.openai.passthrough import (
    RESPONSES_PARAMS,
    responses_fields,
    upstream_params,
    with_upstream,
)
from agenthost.adapters.openai.references import resolve, response_of
from agenthost.adapters.openai.responses_stream import ResponseEvents
from agenthost.adapters.openai.schemas import ResponseRequest
from agenthost.adapters.openai.shared import to_items
from agenthost.adapters.openai.store import ConversationStore, ResponseStore
from agenthost.agents import Agent, InMemorySession, RunOptions, RunResult, Session
from agenthost.agents.shields import save_shield


@dataclass(frozen=True, slots=True)
class Stores:
    responses: ResponseStore
    conversations: ConversationStore


@dataclass
class Turn:
    """One response being made: its ids, its request, and where it is saved."""

    request: ResponseRequest
    options: RunOptions
    agent: Agent
    stores: Stores
    principal: str
    input: list[Item]
    id: str = field(default_factory=lambda: new_id("resp"))
    created_at: int = field(default_factory=lambda: int(time.time()))
    shared: bool = False
    """It runs in a shared session, which keeps the turn (no conversation items to write)."""

    @property
    def hex(self) -> str:
        """The id's random part, which the ids of this turn's items carry."""
        return self.id.removeprefix("resp_")

    @property
    def message_id(self) -> str:
        return f"msg_{self.hex}"

    def response(self, result: RunResult | None = None, **kwargs: Any) -> dict[str, Any]:
        return to_response(
            self.request,
            self.options,
            id=self.id,
            created_at=self.created_at,
            model=self.agent.name,
            result=result,
            **kwargs,
        )

    def completed(self, result: RunResult) -> dict[str, Any]:
        return self.response(result, output=output_items(result, self.hex))

    async def save(self, response: dict[str, Any]) -> None:
        # Shielded: a client leaving now must not leave half a turn saved.
        with save_shield():
            conversation = conversation_id(self.request)
            if conversation is not None and not self.shared:
                items = [*self.input, *response["output"]]
                await self.stores.conversations.append(self.principal, conversation, items)
            if self.request.store:
                await self.stores.responses.save(self.principal, response, self.input)


async def create_response(
    request: Request, agents: Mapping[str, Agent], stores: Stores, principal: str
) -> Response:
    body = await read_body(request, ResponseRequest)
    agent = find_agent(agents, body.model)
    check_supported(body, agent)
    id = new_id("resp")
    instructions, items = input_items(body, id.removeprefix("resp_"))
    options = to_options(body, instructions)
    options = with_upstream(
        options, upstream_params(agent, responses_fields(body), params=RESPONSES_PARAMS)
    )
    conversation = conversation_id(body)
    shared = None
    if conversation is not None:
        shared = await stores.conversations.shared_session(principal, agent.name, conversation)
    session: Session
    if shared is not None:  # the conversation every protocol shares: run in it
        history = to_items(await shared.load())
        session = shared
    else:
        history = await _history(body, stores, principal)
        session = InMemorySession(to_messages(history))
    items = await resolve(items, _Lookup(stores, principal, history))
    turn = Turn(body, options, agent, stores, principal, items, id=id, shared=shared is not None)
    messages = to_messages(items)
    if not body.stream:
        run = agent.run(messages, session=session, options=options)
        response = turn.completed(await unless_disconnected(request.receive, run))
        await turn.save(response)
        return json_response(response)
    # Starts at once; a failure before the first token is an in-stream error.
    updates = agent.run_stream(messages, session=session, options=options)
    return sse_response(ResponseEvents(agent.name, turn).stream(updates))


async def _history(body: ResponseRequest, stores: Stores, principal: str) -> list[Item]:
    if body.previous_response_id:
        return await stores.responses.transcript(principal, body.previous_response_id)
    conversation = conversation_id(body)
    if conversation is not None:
        _, items = await stores.conversations.get(principal, conversation)
        return items
    return []


@dataclass(frozen=True, slots=True)
class _Lookup:
    """The caller's stored items, for :func:`references.resolve`."""

    stores: Stores
    principal: str
    history: list[Item]

    async def __call__(self, id: str) -> Item | None:
        for item in self.history:  # the chain or conversation this turn continues
            if item["id"] == id:
                return item
        stored = await self.stores.responses.get(self.principal, response_of(id))
        if stored is None:
            return None
        return next((i for i in [*stored.input, *stored.response["output"]] if i["id"] == id), None)


async def get_response(response_id: str, stores: Stores, principal: str) -> Response:
    stored = await stores.responses.get(principal, response_id)
    if stored is None:
        raise _not_found(response_id)
    return json_response(stored.response)


async def delete_response(response_id: str, stores: Stores, principal: str) -> Response:
    if not await stores.responses.delete(principal, response_id):
        raise _not_found(response_id)
    return json_response({"id": response_id, "object": "response.deleted", "deleted": True})


async def list_input_items(
    request: Request, response_id: str, stores: Stores, principal: str
) -> Response:
    stored = await stores.responses.get(principal, response_id)
    if stored is None:
        raise _not_found(response_id)
    return json_response(page(stored.input, **paging(request)))


def paging(request: Request) -> dict[str, Any]:
    """``limit`` (1-100, default 20), ``order`` (``asc`` or ``desc``, default) and ``after``."""
    query = request.query_params
    raw = query.get("limit", "20")
    if not raw.isdigit() or not 1 <= int(raw) <= 100:
        raise OpenAIError(
            400, "limit must be an integer from 1 to 100", param="limit", code="invalid_value"
        )
    order = query.get("order", "desc")
    if order not in ("asc", "desc"):
        raise OpenAIError(400, "order must be asc or desc", param="order", code="invalid_value")
    return {"limit": int(raw), "order": order, "after": query.get("after")}


def _not_found(response_id: str) -> OpenAIError:
    return OpenAIError(
        404, f"Response with id '{response_id}' not found.", param="response_id", code="not_found"
    )
