"""``item_reference`` input items: earlier items named by id instead of sent again.

Clients that keep responses stored (the Vercel AI SDK's default Responses
provider, for one) replay earlier turns as ``{"type": "item_reference",
"id": ...}``. A reference is resolved against the caller's own stored items:
the chain or conversation the turn continues, else the stored response the
id was handed out by (every id the server names for a turn carries the
response id's hex: ``msg_<hex>``, ``fc_<hex>_<n>``, ``msg_<hex>_<n>``). An
id that is not found — unknown, expired, not stored, or another API key's —
is a 400 naming it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.items import Item
from agenthost.adapters.openai.schemas import ResponseInputItem

REFERENCE = "item_reference"


def reference(entry: ResponseInputItem, index: int) -> Item:
    """The placeholder of one ``item_reference`` entry (its id is required)."""
    if not entry.id:
        raise OpenAIError(
            400,
            "an item_reference item needs the id of the item it refers to",
            param=f"input[{index}].id",
            code="invalid_value",
        )
    return {"type": REFERENCE, "id": entry.id}


def response_of(item_id: str) -> str:
    """The id of the response that handed out ``item_id`` (if the server named it)."""
    _, _, rest = item_id.partition("_")
    return f"resp_{rest.partition('_')[0]}"


async def resolve(
    items: Sequence[Item], find: Callable[[str], Awaitable[Item | None]]
) -> list[Item]:
    """``items`` with each reference replaced by the stored item it names."""
    resolved: list[Item] = []
    for item in items:
        if item["type"] != REFERENCE:
            resolved.append(item)
            continue
        found = await find(item["id"])
        if found is None:
            raise OpenAIError(
                400,
                f"Item with id '{item['id']}' not found.",
                param="input",
                code="item_not_found",
            )
        resolved.append(found)
    return resolved
