"""Tool approvals over the AI SDK UI stream, kept on the server per chat.

The transport sends the whole chat each time, so the stream keeps no
conversation; but an approval is only ever taken for a call the server asked
about (:mod:`agenthost.agents.tools.approvals`). So a run that ends asking (its
model called a tool with ``approval: required``) stores its whole conversation,
the asked call marked, under ``(agent, chat id, principal)`` in the adapter's
own store namespace (the LRU or Redis, as every session). The request that
answers (its last assistant message's tool parts in ``approval-responded``, as
``addToolApprovalResponse`` leaves them) claims that entry once: it is deleted
as it is taken, so a replay or a second tab finds nothing. The run resumes from
the stored conversation, never from the client's copy, so a client can neither
approve a call the server did not ask about nor change its arguments; an
answer to a call the chat does not wait for is refused (409
``approval_not_pending``) and nothing runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agenthost.adapters.ai_sdk.errors import AISDKError, invalid
from agenthost.adapters.runs import pending_in
from agenthost.agents import Message, SessionKey, ToolCallPart, ToolResultPart
from agenthost.agents.sessions import MemoryManager, entry_lock
from agenthost.agents.tools.approvals import is_approval_request

NAMESPACE = "ai-sdk-approvals"
"""The store namespace of the chats that wait for an approval."""


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer in the request's last assistant message: an approval (``approved`` set,
    for the part's ``approval.id``) or a client tool's output."""

    call_id: str
    approval_id: str | None = None
    approved: bool | None = None
    output: str = ""
    is_error: bool = False


@dataclass(slots=True)
class Resume:
    """What a claimed approval resumes: the stored conversation, the tool message
    answering every call it waits for, and which asked calls were approved or denied."""

    history: list[Message]
    answers: Message
    approved: set[str]
    denied: set[str]


class ChatSession:
    """A run's session in one chat: the history it resumes (a claimed conversation; none for
    a new request, whose whole chat is the input). Its turn is stored only when it ends
    asking for an approval, replacing any older question of the chat."""

    __slots__ = ("history", "key", "store")

    def __init__(self, store: MemoryManager, key: SessionKey, history: Sequence[Message] = ()):
        self.store = store
        self.key = key
        self.history = list(history)

    async def load(self) -> list[Message]:
        return list(self.history)

    async def append(self, messages: Sequence[Message]) -> None:
        conversation = [*self.history, *messages]
        if not any(is_approval_request(c) for c in pending_in(conversation)):
            return
        async with entry_lock(self.store, self.key):
            await self.store.delete(self.key)
            await self.store.append(self.key, conversation)


async def claim(store: MemoryManager, key: SessionKey, replies: Sequence[Reply]) -> Resume:
    """Take the conversation of chat ``key`` that waits for the approvals ``replies`` give
    (once: it leaves the store), with the answers to what it waits for."""
    async with entry_lock(store, key):
        conversation = await store.get(key)
        waiting = pending_in(conversation.messages) if conversation is not None else []
        resume = _answer(waiting, replies, key.session)
        if conversation is None or not await store.delete(key):
            raise not_pending(key.session, replies[0].call_id)
    resume.history = conversation.messages
    return resume


def _answer(waiting: Sequence[ToolCallPart], replies: Sequence[Reply], chat: str) -> Resume:
    by_id = {r.call_id: r for r in replies}
    asked = {c.id for c in waiting if is_approval_request(c)}
    for given in replies:
        if given.approval_id is not None and (
            given.call_id not in asked or given.approval_id != given.call_id
        ):
            raise not_pending(chat, given.call_id)
    approved: set[str] = set()
    denied: set[str] = set()
    parts: list[ToolResultPart] = []
    for call in waiting:
        reply = by_id.get(call.id)
        if call.id in asked and reply is not None and reply.approved is not None:
            (approved if reply.approved else denied).add(call.id)
            content = "yes" if reply.approved else "no"
            part = ToolResultPart(call_id=call.id, name=call.name, content=content)
        elif call.id not in asked and reply is not None and reply.approval_id is None:
            part = ToolResultPart(
                call_id=call.id, name=call.name, content=reply.output, is_error=reply.is_error
            )
        else:
            raise invalid(f"chat {chat!r} waits for an answer to the call {call.id!r}")
        parts.append(part)
    return Resume([], Message(role="tool", parts=parts), approved, denied)


def not_pending(chat: str, call_id: str) -> AISDKError:
    message = f"chat {chat!r} has no approval pending for the call {call_id!r}"
    return AISDKError(409, message, code="approval_not_pending")
