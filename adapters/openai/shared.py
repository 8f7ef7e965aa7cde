"""Conversations of agents whose sessions every protocol shares (``sessions: shared``).

Such an agent's conversation lives in the session store common to all
protocols, as messages under ``SessionKey(agent, id, principal)``: the
``conv_…`` id is the A2A ``contextId``, the MCP ``session_id``… of the same
conversation. The Conversations API shows it as items (user and assistant
text, each message once, whichever protocol wrote it), and a response with
``conversation`` runs in that session directly.

A conversation made with ``POST /conversations`` has no agent yet: its
resource and first items stay in this adapter's store until its first
response, which moves the items into that agent's shared conversation and
binds the conversation to it (other agents then get a 404 for it). A
conversation started over another protocol has no resource here: it is
shown with the time of its first message and empty metadata (an update
stores a resource for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.items import Item, message_item, to_messages
from agenthost.adapters.openai.store import (
    CONVERSATIONS,
    PACKED,
    ConversationStore,
    chunks_of,
    conversation_not_found,
    item_not_found,
)
from agenthost.agents import Conversation, MemoryManager, Message, SessionKey
from agenthost.agents.sessions import ManagedSession, entry_lock

_AGENT = "agent"  # the entry's meta field naming the agent it is bound to


class SharedConversationStore(ConversationStore):
    """The Conversations API over shared sessions (``sessions`` holds them) and own entries."""

    def __init__(
        self, memory: MemoryManager, sessions: MemoryManager, agents: frozenset[str]
    ) -> None:
        super().__init__(memory)
        self.sessions = sessions
        self.agents = agents

    async def shared_session(self, principal: str, agent: str, id: str) -> ManagedSession | None:
        if agent not in self.agents:
            return None
        key = SessionKey(agent, id, principal)
        if await self.sessions.get(key) is not None:
            return ManagedSession(self.sessions, key)
        entry = await self.memory.get(SessionKey(CONVERSATIONS, id, principal))
        if entry is None or "conversation" not in entry.meta or entry.meta.get(_AGENT):
            raise conversation_not_found(id)
        # The first response of a conversation made here: its items move to the agent.
        await self.sessions.append(key, _messages(chunks_of(entry.meta).items()))
        await self.memory.append(SessionKey(CONVERSATIONS, id, principal), (), meta={_AGENT: agent})
        return ManagedSession(self.sessions, key)

    def _not_found(self, id: str) -> OpenAIError:
        return conversation_not_found(id)  # sessions are shared, for some agents at least

    async def _shared(self, principal: str, id: str) -> tuple[dict[str, Any] | None, str | None]:
        """This adapter's resource of ``id`` (None if none) and its shared agent (if any)."""
        entry = await self.memory.get(SessionKey(CONVERSATIONS, id, principal))
        resource = entry.meta.get("conversation") if entry is not None else None
        if resource is not None:
            bound = entry.meta.get(_AGENT) if entry is not None else None
            return resource, bound if isinstance(bound, str) else None
        for agent in sorted(self.agents):
            if await self.sessions.get(SessionKey(agent, id, principal)) is not None:
                return None, agent
        return None, None

    async def _conversation(self, principal: str, agent: str, id: str) -> Conversation:
        conversation = await self.sessions.get(SessionKey(agent, id, principal))
        if conversation is None:
            raise conversation_not_found(id)
        return conversation

    async def get(self, principal: str, id: str) -> tuple[dict[str, Any], list[Item]]:
        resource, agent = await self._shared(principal, id)
        if agent is None:
            return await super().get(principal, id)
        conversation = await self._conversation(principal, agent, id)
        return resource or _resource(id, conversation), to_items(conversation.messages)

    async def append(self, principal: str, id: str, items: Sequence[Item]) -> None:
        _, agent = await self._shared(principal, id)
        if agent is None:
            await super().append(principal, id, items)
            return
        await self._conversation(principal, agent, id)  # a 404 unless it exists
        await self.sessions.append(SessionKey(agent, id, principal), _messages(items))

    async def update(self, principal: str, id: str, metadata: dict[str, str]) -> dict[str, Any]:
        resource, agent = await self._shared(principal, id)
        if agent is None or resource is not None:
            return await super().update(principal, id, metadata)
        conversation = await self._conversation(principal, agent, id)
        resource = {**_resource(id, conversation), "metadata": metadata}
        meta = {"conversation": resource, PACKED: [], _AGENT: agent}
        await self.memory.append(SessionKey(CONVERSATIONS, id, principal), (), meta=meta)
        return resource

    async def delete(self, principal: str, id: str) -> bool:
        _, agent = await self._shared(principal, id)
        own = await super().delete(principal, id)
        if agent is None:
            return own
        return await self.sessions.delete(SessionKey(agent, id, principal)) or own

    async def delete_item(self, principal: str, id: str, item_id: str) -> dict[str, Any]:
        resource, agent = await self._shared(principal, id)
        if agent is None:
            return await super().delete_item(principal, id, item_id)
        key = SessionKey(agent, id, principal)
        async with entry_lock(self.sessions, key):
            conversation = await self._conversation(principal, agent, id)
            kept = [m for m in conversation.messages if m.id != item_id]
            if len(kept) == len(conversation.messages):
                raise item_not_found(item_id)
            await self.sessions.delete(key)
            await self.sessions.append(key, kept, meta=conversation.meta)
        return resource or _resource(id, conversation)


def _messages(items: Sequence[Item]) -> list[Message]:
    """Items as messages, one per item, keeping each message item's id."""
    messages = []
    for item in items:
        for message in to_messages([item]):
            id = item["id"] if item["type"] == "message" else None
            messages.append(message.model_copy(update={"id": id}) if id else message)
    return messages


def to_items(messages: Sequence[Message]) -> list[Item]:
    """A shared conversation's user and assistant text as message items, in order."""
    items: list[Item] = []
    for n, message in enumerate(messages):
        text = message.text
        if message.role not in ("user", "assistant") or not text:
            continue
        id = message.id or f"msg_{n}"
        if message.role == "assistant":
            items.append(message_item(id, text))
        else:
            content = [{"type": "input_text", "text": text}]
            items.append(
                {
                    "type": "message",
                    "id": id,
                    "role": "user",
                    "status": "completed",
                    "content": content,
                }
            )
    return items


def _resource(id: str, conversation: Conversation) -> dict[str, Any]:
    first = conversation.messages[0].metadata if conversation.messages else None
    created = (first or {}).get("at", 0)
    return {"id": id, "object": "conversation", "created_at": int(created), "metadata": {}}
