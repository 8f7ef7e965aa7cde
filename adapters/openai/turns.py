"""A response being made: its turn (ids, request, where it is saved), its session
and its input, prepared alike for a request and for a background response that a
replica resumes (:mod:`.background`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agenthost.adapters.openai.convert_responses import (
    conversation_id,
    input_items,
    to_options,
    to_response,
)
from agenthost.adapters.openai.items import Item, new_id, output_items, to_messages
from agenthost.adapters.openai.passthrough import (
    RESPONSES_PARAMS,
    responses_fields,
    upstream_params,
    with_upstream,
)
from agenthost.adapters.openai.references import resolve, response_of
from agenthost.adapters.openai.schemas import ResponseRequest
from agenthost.adapters.openai.shared import to_items
from agenthost.adapters.openai.store import ConversationStore, ResponseStore
from agenthost.agents import Agent, InMemorySession, Message, RunOptions, RunResult, Session
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
        conversation = conversation_id(self.request)
        if self.shared:
            conversation = None  # the shared session keeps the turn
        if conversation is None and not self.request.store:
            return  # nothing to save: no shield to open
        # Shielded: a client leaving now must not leave half a turn saved.
        with save_shield():
            if conversation is not None:
                items = [*self.input, *response["output"]]
                await self.stores.conversations.append(self.principal, conversation, items)
            if self.request.store:
                await self.stores.responses.save(self.principal, response, self.input)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A response ready to run: its turn, the session it runs in, and its input."""

    turn: Turn
    session: Session
    messages: list[Message]


async def prepare(
    body: ResponseRequest,
    agent: Agent,
    stores: Stores,
    principal: str,
    *,
    id: str,
    created_at: int | None = None,
    items: list[Item] | None = None,
) -> Prepared:
    """The turn of response ``id`` (``items``: its input, already resolved), its session
    and its messages, on any replica (a background response resumed elsewhere too)."""
    instructions, raw_items = input_items(body, id.removeprefix("resp_"))
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
    if items is None:
        items = await resolve(raw_items, StoredItems(stores, principal, history))
    turn = Turn(body, options, agent, stores, principal, items, id=id, shared=shared is not None)
    if created_at is not None:
        turn.created_at = created_at
    return Prepared(turn, session, to_messages(items))


async def _history(body: ResponseRequest, stores: Stores, principal: str) -> list[Item]:
    if body.previous_response_id:
        return await stores.responses.transcript(principal, body.previous_response_id)
    conversation = conversation_id(body)
    if conversation is not None:
        _, items = await stores.conversations.get(principal, conversation)
        return items
    return []


@dataclass(frozen=True, slots=True)
class StoredItems:
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
