"""Where the Responses API keeps state: stored responses and conversations.

Two bounded stores, so that neither can push the other's entries out:

- **Responses** (the adapter's own memory manager). A stored response keeps
  its own input items and the response object, plus a link to its parent
  (``previous_response_id``); a chain's transcript is rebuilt by walking the
  links. N turns cost O(N) memory, not a copy of the transcript per turn.
- **Conversations** (``new_memory("openai-conversations")``). A conversation
  keeps its items in order.

Everything is stored as compact JSON text (a stored response's JSON is
also deflated; ``bench/session_memory.py`` measures both) and keyed by
principal: another API key's ids are simply not found. A conversation or an
earlier response that was evicted or expired is an error, never a silent
empty history. Reading an entry refreshes its idle time (the memory
manager's TTL is idle time).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import orjson

from agenthost.adapters.openai.convert_responses import compact, expand
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.items import Item
from agenthost.agents import MemoryManager, SessionKey
from agenthost.agents.sessions import ManagedSession, entry_lock

RESPONSES = "responses"
CONVERSATIONS = "conversations"
MAX_CHAIN = 10_000  # a guard against a cycle; chains are never this long


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _loads(text: str) -> Any:
    # From bytes: orjson reading a non-ASCII str caches a UTF-8 copy on the stored
    # string for as long as it lives (~1.3x its size; bench/protocol_sessions.py).
    return orjson.loads(text.encode())


# Deflate's preset dictionary: the JSON skeleton every stored response repeats,
# so that only texts, ids and numbers cost bytes (a typical turn: 830 → 350).
_SKELETON = (
    b'{"response":{"created_at":,"completed_at":,"status":"completed","model":"",'
    b'"output":[{"type":"message","id":"msg_","status":"completed","role":"assistant",'
    b'"content":[{"type":"output_text","text":"","annotations":[],"logprobs":[]}]},'
    b'{"type":"function_call","id":"fc_","call_id":"call_","name":"","arguments":"",'
    b'"status":"completed"}],"usage":[]},"input":[{"type":"message","id":"msg_",'
    b'"role":"user","status":"completed","content":[{"type":"input_text","text":" the "}]}],'
    b'"parent":"resp_"}'
)


def pack(value: Any) -> str:
    """``value`` as deflated JSON in a latin-1 string.

    A latin-1 string costs one byte per character in CPython and is still a
    string for a store that serialises metadata as JSON.
    """
    deflate = zlib.compressobj(zdict=_SKELETON)
    return (deflate.compress(orjson.dumps(value)) + deflate.flush()).decode("latin-1")


def unpack(text: str) -> Any:
    inflate = zlib.decompressobj(zdict=_SKELETON)
    return orjson.loads(inflate.decompress(text.encode("latin-1")) + inflate.flush())


@dataclass(frozen=True, slots=True)
class StoredResponse:
    response: dict[str, Any]
    input: list[Item]
    parent: str | None


class ResponseStore:
    """Stored responses of every principal, each with its input items and parent link."""

    def __init__(self, memory: MemoryManager) -> None:
        self.memory = memory

    async def save(self, principal: str, response: dict[str, Any], input: Sequence[Item]) -> None:
        parent = response.get("previous_response_id")
        # One text per response: the fewest Python objects per stored turn.
        turn = pack({"response": compact(response), "input": input, "parent": parent})
        key = SessionKey(RESPONSES, response["id"], principal)
        await self.memory.append(key, (), meta={"turn": turn})

    async def get(self, principal: str, id: str) -> StoredResponse | None:
        key = SessionKey(RESPONSES, id, principal)
        stored = await self.memory.get(key)
        if stored is None or "turn" not in stored.meta:
            return None
        turn = unpack(stored.meta["turn"])
        parent = turn["parent"]
        return StoredResponse(expand(turn["response"], id=id, parent=parent), turn["input"], parent)

    async def delete(self, principal: str, id: str) -> bool:
        return await self.memory.delete(SessionKey(RESPONSES, id, principal))

    async def transcript(self, principal: str, id: str) -> list[Item]:
        """Every item of the chain ending with response ``id``, oldest first."""
        turns: list[list[Item]] = []
        next_id: str | None = id
        while next_id is not None and len(turns) < MAX_CHAIN:
            stored = await self.get(principal, next_id)
            if stored is None:
                raise _lost(id, next_id)
            turns.append([*stored.input, *stored.response.get("output", ())])
            next_id = stored.parent
        return [item for turn in reversed(turns) for item in turn]


def _lost(id: str, missing: str) -> OpenAIError:
    if missing == id:
        message = f"Previous response with id '{id}' not found."
    else:
        message = (
            f"Response '{missing}', an earlier turn of response '{id}', has expired or "
            "was deleted: the conversation cannot be continued"
        )
    return OpenAIError(
        400, message, param="previous_response_id", code="previous_response_not_found"
    )


class ConversationStore:
    """Conversations of every principal: the resource and its items, in order.

    An update reads the entry and writes it back whole under the entry's lock
    (:func:`~agenthost.agents.sessions.entry_lock`: a Redis lock across
    replicas; the in-process store does both without yielding), so no update
    is lost.
    """

    def __init__(self, memory: MemoryManager) -> None:
        self.memory = memory

    async def shared_session(self, principal: str, agent: str, id: str) -> ManagedSession | None:
        """The session of ``agent`` every protocol shares for conversation ``id``, when the
        agent's sessions are shared (:mod:`adapters.openai.shared`); else None."""
        return None

    async def create(self, principal: str, resource: dict[str, Any], items: Sequence[Item]) -> None:
        await self._write(principal, resource, [_dumps(i) for i in items])

    async def get(self, principal: str, id: str) -> tuple[dict[str, Any], list[Item]]:
        """The conversation and its items; a 404 when it does not exist (or expired)."""
        resource, items = await self._read(principal, id)
        return resource, [_loads(i) for i in items]

    async def append(self, principal: str, id: str, items: Sequence[Item]) -> None:
        async with self._locked(principal, id):
            resource, stored = await self._read(principal, id)
            await self._write(principal, resource, [*stored, *(_dumps(i) for i in items)])

    async def update(self, principal: str, id: str, metadata: dict[str, str]) -> dict[str, Any]:
        async with self._locked(principal, id):
            resource, stored = await self._read(principal, id)
            resource = {**resource, "metadata": metadata}
            await self._write(principal, resource, stored)
        return resource

    async def delete_item(self, principal: str, id: str, item_id: str) -> dict[str, Any]:
        async with self._locked(principal, id):
            resource, stored = await self._read(principal, id)
            kept = [i for i in stored if _loads(i)["id"] != item_id]
            if len(kept) == len(stored):
                raise item_not_found(item_id)
            await self._write(principal, resource, kept)
        return resource

    def _locked(self, principal: str, id: str) -> AbstractAsyncContextManager[Any]:
        return entry_lock(self.memory, SessionKey(CONVERSATIONS, id, principal))

    async def delete(self, principal: str, id: str) -> bool:
        return await self.memory.delete(SessionKey(CONVERSATIONS, id, principal))

    async def _read(self, principal: str, id: str) -> tuple[dict[str, Any], list[str]]:
        key = SessionKey(CONVERSATIONS, id, principal)
        stored = await self.memory.get(key)
        if stored is None or "conversation" not in stored.meta:
            raise self._not_found(id)
        return stored.meta["conversation"], list(stored.meta["items"])

    def _not_found(self, id: str) -> OpenAIError:
        """The 404 of ``id``; a name of the caller's own (not a ``conv_`` id) was perhaps
        another protocol's conversation, which is one here only with shared sessions."""
        return conversation_not_found(id, unshared=not id.startswith("conv_"))

    async def _write(self, principal: str, resource: dict[str, Any], items: list[str]) -> None:
        key = SessionKey(CONVERSATIONS, resource["id"], principal)
        # Both keys every time: an entry is never left half written.
        await self.memory.append(key, (), meta={"conversation": resource, "items": items})


UNSHARED = (
    " Sessions are not shared here: an MCP session_id, A2A contextId or ACP session is a"
    " conversation of /v1 only with AGENTHOST_SESSIONS=shared (or `sessions: shared` on"
    " the agent; docs/conversations.md)."
)


def conversation_not_found(id: str, *, unshared: bool = False) -> OpenAIError:
    """The 404 of conversation ``id``; ``unshared``: saying that sessions are not shared."""
    return OpenAIError(
        404,
        f"Conversation with id '{id}' not found. It may have expired (idle for longer "
        "than the session TTL) or been evicted; create one with POST /v1/conversations."
        + (UNSHARED if unshared else ""),
        param="conversation",
        code="conversation_not_found",
    )


def item_not_found(id: str) -> OpenAIError:
    return OpenAIError(404, f"Item with id '{id}' not found.", param="item_id", code="not_found")
