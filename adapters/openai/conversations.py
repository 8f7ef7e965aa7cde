"""The Conversations API: ``/conversations`` and their items.

A conversation is made with ``POST /conversations`` (optionally with its
first items) and continued by ``POST /responses`` with ``conversation``:
each response appends its input and output items. A conversation that does
not exist — never made, deleted, expired or evicted — is a 404, never an
empty history. Ids are made by the server (``conv_...``); a bare name
(``"conversation": "support"``) is not created on first use: it is a 404
like any unknown id, so a typo or an expired conversation is never mistaken
for a new one.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.openai.http import json_response, read_body
from agenthost.adapters.openai.items import new_id, page, to_item
from agenthost.adapters.openai.responses import paging
from agenthost.adapters.openai.schemas import ConversationCreate, ConversationUpdate, ItemsCreate
from agenthost.adapters.openai.store import item_not_found
from agenthost.adapters.openai.turns import Stores


async def create(request: Request, stores: Stores, principal: str) -> Response:
    body = await read_body(request, ConversationCreate)
    items = [to_item(item, n, param="items") for n, item in enumerate(body.items or ())]
    resource = {
        "id": new_id("conv"),
        "object": "conversation",
        "created_at": int(time.time()),
        "metadata": body.metadata or {},
    }
    await stores.conversations.create(principal, resource, items)
    return json_response(resource)


async def retrieve(id: str, stores: Stores, principal: str) -> Response:
    resource, _ = await stores.conversations.get(principal, id)
    return json_response(resource)


async def update(request: Request, id: str, stores: Stores, principal: str) -> Response:
    body = await read_body(request, ConversationUpdate)
    return json_response(await stores.conversations.update(principal, id, body.metadata))


async def delete(id: str, stores: Stores, principal: str) -> Response:
    if not await stores.conversations.delete(principal, id):
        await stores.conversations.get(principal, id)  # the 404, worded once
    return json_response({"id": id, "object": "conversation.deleted", "deleted": True})


async def list_items(request: Request, id: str, stores: Stores, principal: str) -> Response:
    _, items = await stores.conversations.get(principal, id)
    return json_response(page(items, **paging(request)))


async def add_items(request: Request, id: str, stores: Stores, principal: str) -> Response:
    body = await read_body(request, ItemsCreate)
    items = [to_item(item, n, param="items") for n, item in enumerate(body.items)]
    await stores.conversations.append(principal, id, items)
    return json_response(_list(items))


async def get_item(id: str, item_id: str, stores: Stores, principal: str) -> Response:
    _, items = await stores.conversations.get(principal, id)
    for item in items:
        if item["id"] == item_id:
            return json_response(item)
    raise item_not_found(item_id)


async def delete_item(id: str, item_id: str, stores: Stores, principal: str) -> Response:
    return json_response(await stores.conversations.delete_item(principal, id, item_id))


def _list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": items,
        "first_id": items[0]["id"],
        "last_id": items[-1]["id"],
        "has_more": False,
    }
