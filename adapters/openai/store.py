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

import base64
import re
import secrets
import zlib
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import orjson

from agenthost.adapters.cancels import is_shared
from agenthost.adapters.openai.convert_responses import compact, expand
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.items import Item, new_id
from agenthost.agents import MemoryManager, SessionKey
from agenthost.agents.sessions import ManagedSession, entry_lock

RESPONSES = "responses"
CONVERSATIONS = "conversations"
MAX_CHAIN = 10_000  # a guard against a cycle; chains are never this long


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


def pack(value: Any, *, ascii: bool = False) -> str:
    """``value`` as deflated JSON in a latin-1 string, or with ``ascii`` in base64.

    A latin-1 string costs one byte per character in CPython and is still a
    string for a store that serialises metadata as JSON. In JSON (Redis) it
    is ~2.1x that (a byte over 127 is two bytes of UTF-8, a control byte six
    of ``\\u00XX``): base64's 1.33x is the smaller there.
    """
    deflate = zlib.compressobj(zdict=_SKELETON)
    packed = deflate.compress(orjson.dumps(value)) + deflate.flush()
    return base64.b64encode(packed).decode() if ascii else packed.decode("latin-1")


def unpack(text: str) -> Any:
    """What :func:`pack` packed, in either form: a deflate stream starts with the byte
    ``x`` (0x78), its base64 with ``e``."""
    packed = text.encode("latin-1") if text.startswith("x") else base64.b64decode(text)
    inflate = zlib.decompressobj(zdict=_SKELETON)
    return orjson.loads(inflate.decompress(packed) + inflate.flush())


@dataclass(frozen=True, slots=True)
class StoredResponse:
    response: dict[str, Any]
    input: list[Item]
    parent: str | None


ROOT = "turn"
"""The meta field of a chain's first response (and of every response stored before chains)."""
_CHILD_ID = re.compile(r"(resp_[0-9a-f]+)x([0-9a-f]+)")
_ROOT_ID = re.compile(r"resp_[0-9a-f]+")


def response_id(previous: str | None) -> str:
    """The id of a new response: continuing response ``previous``, a turn of its chain
    (``resp_<chain's hex>x<own hex>``: its entry is found from the id); else a new chain's.
    """
    if not previous:
        return new_id("resp")  # a new chain
    root, _ = _locate(previous)
    if not _ROOT_ID.fullmatch(root):
        return new_id("resp")  # an id not of ours: a 400 follows
    return f"{root}x{secrets.token_hex(6)}"


def _locate(id: str) -> tuple[str, str]:
    """The chain (entry) that stores response ``id``, and its field there."""
    if "x" not in id:  # no later turn's id (a chain's first: the common case)
        return id, ROOT
    child = _CHILD_ID.fullmatch(id)
    return (child[1], child[2]) if child else (id, ROOT)


class ResponseStore:
    """Stored responses of every principal, each with its input items and parent link.

    A chain (a response and the ones continuing it, forks included) is one
    entry keyed by its first response's id, one meta field per response
    (its :func:`pack`-ed turn): one set of entry bookkeeping per chain, not
    per turn. A later turn's id names its chain (:func:`response_id`). A
    response stored before chains is a chain of one (its field ``turn``),
    so one stored then is read, continued and deleted as before. A deleted
    response of a longer chain leaves its field ``null``.
    """

    def __init__(self, memory: MemoryManager) -> None:
        self.memory = memory
        self.ascii = is_shared(memory)  # packed texts in base64 (see pack)

    async def save(self, principal: str, response: dict[str, Any], input: Sequence[Item]) -> None:
        parent = response.get("previous_response_id")
        # One text per response: the fewest Python objects per stored turn.
        turn = {"response": compact(response), "input": input, "parent": parent}
        packed = pack(turn, ascii=self.ascii)
        root, field = _locate(response["id"])
        await self.memory.append(SessionKey(RESPONSES, root, principal), (), meta={field: packed})

    async def _chain(self, principal: str, root: str) -> dict[str, Any]:
        stored = await self.memory.get(SessionKey(RESPONSES, root, principal))
        return stored.meta if stored is not None else {}

    async def get(self, principal: str, id: str) -> StoredResponse | None:
        root, field = _locate(id)
        return _stored(id, (await self._chain(principal, root)).get(field))

    async def delete(self, principal: str, id: str) -> bool:
        root, field = _locate(id)
        key = SessionKey(RESPONSES, root, principal)
        async with entry_lock(self.memory, key):
            chain = await self._chain(principal, root)
            if chain.get(field) is None:
                return False
            if sum(1 for turn in chain.values() if turn is not None) == 1:
                return await self.memory.delete(key)
            await self.memory.append(key, (), meta={field: None})
        return True

    async def transcript(self, principal: str, id: str) -> list[Item]:
        """Every item of the chain ending with response ``id``, oldest first."""
        chains: dict[str, dict[str, Any]] = {}  # each entry read once
        turns: list[list[Item]] = []
        next_id: str | None = id
        while next_id is not None and len(turns) < MAX_CHAIN:
            root, field = _locate(next_id)
            if root not in chains:
                chains[root] = await self._chain(principal, root)
            stored = _stored(next_id, chains[root].get(field))
            if stored is None:
                raise _lost(id, next_id)
            turns.append([*stored.input, *stored.response.get("output", ())])
            next_id = stored.parent
        return [item for turn in reversed(turns) for item in turn]


def _stored(id: str, packed: str | None) -> StoredResponse | None:
    if packed is None:
        return None
    turn = unpack(packed)
    parent = turn["parent"]
    return StoredResponse(expand(turn["response"], id=id, parent=parent), turn["input"], parent)


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

    An entry's meta holds the resource (``conversation``) and its items as
    ``packed`` chunks, one per write (:func:`pack` of the write's items:
    ~45 % of their JSON), so that an append packs only its own items. An
    entry written before chunks keeps its items as JSON texts (``items``);
    it is read as it is and rewritten as chunks by its next write.

    An update reads the entry and writes it back whole under the entry's lock
    (:func:`~agenthost.agents.sessions.entry_lock`: a Redis lock across
    replicas; the in-process store does both without yielding), so no update
    is lost.
    """

    def __init__(self, memory: MemoryManager) -> None:
        self.memory = memory
        self.ascii = is_shared(memory)  # packed texts in base64 (see pack)

    async def shared_session(self, principal: str, agent: str, id: str) -> ManagedSession | None:
        """The session of ``agent`` every protocol shares for conversation ``id``, when the
        agent's sessions are shared (:mod:`adapters.openai.shared`); else None."""
        return None

    async def create(self, principal: str, resource: dict[str, Any], items: Sequence[Item]) -> None:
        packed = [pack(items, ascii=self.ascii)] if items else []
        await self._write(principal, resource, _Chunks(packed, False))

    async def get(self, principal: str, id: str) -> tuple[dict[str, Any], list[Item]]:
        """The conversation and its items; a 404 when it does not exist (or expired)."""
        resource, chunks = await self._read(principal, id)
        return resource, chunks.items()

    async def append(self, principal: str, id: str, items: Sequence[Item]) -> None:
        async with self._locked(principal, id):
            resource, chunks = await self._read(principal, id)
            chunks.packed.append(pack(items, ascii=self.ascii))
            await self._write(principal, resource, chunks)

    async def update(self, principal: str, id: str, metadata: dict[str, str]) -> dict[str, Any]:
        async with self._locked(principal, id):
            resource, chunks = await self._read(principal, id)
            resource = {**resource, "metadata": metadata}
            await self._write(principal, resource, chunks)
        return resource

    async def delete_item(self, principal: str, id: str, item_id: str) -> dict[str, Any]:
        async with self._locked(principal, id):
            resource, chunks = await self._read(principal, id)
            items = chunks.items()
            kept = [i for i in items if i["id"] != item_id]
            if len(kept) == len(items):
                raise item_not_found(item_id)
            packed = [pack(kept, ascii=self.ascii)]
            await self._write(principal, resource, _Chunks(packed, chunks.legacy))
        return resource

    def _locked(self, principal: str, id: str) -> AbstractAsyncContextManager[Any]:
        return entry_lock(self.memory, SessionKey(CONVERSATIONS, id, principal))

    async def delete(self, principal: str, id: str) -> bool:
        return await self.memory.delete(SessionKey(CONVERSATIONS, id, principal))

    async def _read(self, principal: str, id: str) -> tuple[dict[str, Any], _Chunks]:
        key = SessionKey(CONVERSATIONS, id, principal)
        stored = await self.memory.get(key)
        if stored is None or "conversation" not in stored.meta:
            raise self._not_found(id)
        return stored.meta["conversation"], chunks_of(stored.meta, ascii=self.ascii)

    def _not_found(self, id: str) -> OpenAIError:
        """The 404 of ``id``; a name of the caller's own (not a ``conv_`` id) was perhaps
        another protocol's conversation, which is one here only with shared sessions."""
        return conversation_not_found(id, unshared=not id.startswith("conv_"))

    async def _write(self, principal: str, resource: dict[str, Any], chunks: _Chunks) -> None:
        key = SessionKey(CONVERSATIONS, resource["id"], principal)
        # Both keys every time: an entry is never left half written.
        meta: dict[str, Any] = {"conversation": resource, PACKED: chunks.packed}
        if chunks.legacy:
            meta[LEGACY_ITEMS] = []  # now in the chunks
        await self.memory.append(key, (), meta=meta)


PACKED = "packed"
"""The meta field of a conversation's items: :func:`pack` chunks, one per write."""
LEGACY_ITEMS = "items"
"""The meta field of a conversation's items before chunks: one JSON text per item."""


@dataclass(slots=True)
class _Chunks:
    """A conversation's items as stored: packed chunks, and whether the entry had
    items in the layout before chunks (``items``: then cleared by the next write)."""

    packed: list[str]
    legacy: bool

    def items(self) -> list[Item]:
        return [item for chunk in self.packed for item in unpack(chunk)]


def chunks_of(meta: dict[str, Any], *, ascii: bool = False) -> _Chunks:
    """The items of a stored conversation's ``meta``, in either layout, as chunks.

    Items in the layout before chunks come first (every later write packed
    them into its chunks), packed here into one chunk.
    """
    legacy = meta.get(LEGACY_ITEMS) or []
    first = [pack([_loads(i) for i in legacy], ascii=ascii)] if legacy else []
    return _Chunks([*first, *meta.get(PACKED, ())], LEGACY_ITEMS in meta)


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
