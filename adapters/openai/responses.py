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

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.disconnect import unless_disconnected
from agenthost.adapters.durable import DurableRuns
from agenthost.adapters.openai import background
from agenthost.adapters.openai.convert_responses import check_supported
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.http import (
    find_agent,
    json_response,
    read_body,
    sse_event,
    sse_response,
)
from agenthost.adapters.openai.items import page
from agenthost.adapters.openai.responses_stream import EventEncoder, ResponseEvents
from agenthost.adapters.openai.schemas import ResponseRequest
from agenthost.adapters.openai.store import response_id
from agenthost.adapters.openai.turns import Prepared, Stores, prepare
from agenthost.adapters.runs import RunEvents
from agenthost.agents import Agent


async def create_response(
    request: Request,
    agents: Mapping[str, Agent],
    stores: Stores,
    principal: str,
    runs: DurableRuns | None = None,
) -> Response:
    body = await read_body(request, ResponseRequest)
    agent, prepared = await start(body, agents, stores, principal)
    if body.background:
        if runs is None:
            raise OpenAIError(400, "background responses are not served here", param="background")
        return await background.start(prepared, runs, stream=bool(body.stream))
    turn, session, messages, options = (
        prepared.turn,
        prepared.session,
        prepared.messages,
        prepared.turn.options,
    )
    if not body.stream:
        run = agent.run(messages, session=session, options=options)
        response = turn.completed(await unless_disconnected(request.receive, run))
        await turn.save(response)
        return json_response(response)
    return sse_response(stream_events(agent, prepared))


async def start(
    body: ResponseRequest, agents: Mapping[str, Agent], stores: Stores, principal: str
) -> tuple[Agent, Prepared]:
    """The agent ``body`` names and its turn, checked and prepared (its history loaded)."""
    agent = find_agent(agents, body.model)
    check_supported(body, agent)
    id = response_id(body.previous_response_id)
    return agent, await prepare(body, agent, stores, principal, id=id)


def stream_events(
    agent: Agent, prepared: Prepared, encode: EventEncoder = sse_event
) -> RunEvents[bytes]:
    """The events of a streamed response, each made by ``encode`` (progress as SSE comments).

    The run starts at once; a failure before the first token is an in-stream error.
    """
    updates = agent.run_stream(
        prepared.messages, session=prepared.session, options=prepared.turn.options
    )
    return ResponseEvents(agent.name, prepared.turn, encode=encode).events(updates)


async def get_response(
    request: Request, response_id: str, stores: Stores, principal: str, runs: DurableRuns
) -> Response:
    """A stored response; a background one as it stands, or its events (``stream=true``,
    after ``starting_after``) replayed and then followed."""
    query = request.query_params
    if query.get("stream", "").lower() == "true":
        return await background.follow(request, response_id, runs, stores, principal)
    stored = await stores.responses.get(principal, response_id)
    if stored is not None:
        return json_response(stored.response)
    response = await background.current(response_id, runs, stores, principal)
    if response is None:
        raise not_found(response_id)
    return json_response(response)


async def cancel_response(
    response_id: str, stores: Stores, principal: str, runs: DurableRuns
) -> Response:
    """Stop a background response; the response as it stands (``cancelled`` once stopped)."""
    response = await background.cancel(response_id, runs, stores, principal)
    if response is None:
        raise not_found(response_id)
    return json_response(response)


async def delete_response(response_id: str, stores: Stores, principal: str) -> Response:
    if not await stores.responses.delete(principal, response_id):
        raise not_found(response_id)
    return json_response({"id": response_id, "object": "response.deleted", "deleted": True})


async def list_input_items(
    request: Request, response_id: str, stores: Stores, principal: str
) -> Response:
    stored = await stores.responses.get(principal, response_id)
    if stored is None:
        raise not_found(response_id)
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


def not_found(response_id: str) -> OpenAIError:
    return OpenAIError(
        404, f"Response with id '{response_id}' not found.", param="response_id", code="not_found"
    )
