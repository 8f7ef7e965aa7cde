"""Resumable chats (``AGENTHOST_AI_SDK_RESUME=true``): a chat's run outlives its request.

With resume on, a ``POST`` that names its chat (``id``: ``DefaultChatTransport``
always sends one) runs as a durable run (:mod:`agenthost.adapters.durable`) of
kind :data:`PROTOCOL`: its record holds what any replica needs to run it again
(the input messages, the instructions, the conversation an approval answer
resumed), the run goes on in a task of its own, and the ``POST`` streams a view
of its log. A client that drops (a reload, a lost network) does not stop it: as
the AI SDK's own resumable streams, a chat with resume is not stopped by its
client's abort either (``stop()`` only stops reading).

The chat's current run is found by ``(agent, chat id, principal)``: a pointer
in the adapter's own store namespace (the LRU, or Redis with replicas), so
another key never sees it. ``GET /ai-sdk/{agent}/{chatId}/stream``
(``reconnectToStream``, ``useChat({resume: true})``) answers 204 when the chat
has no run going on, else replays the run's chunks from its start (``start``
with the same message id) and follows it to ``[DONE]``, on any replica. A new
``POST`` in a chat whose run still goes on stops that run: a chat has one
stream at a time.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from typing import Any, cast

from agenthost.adapters.ai_sdk.approvals import ChatSession, Resume
from agenthost.adapters.ai_sdk.stream import UIMessageChunks
from agenthost.adapters.base import AdapterContext
from agenthost.adapters.durable import DurableRuns, LoggedUpdate, RunRecord
from agenthost.adapters.runs import RunEvents
from agenthost.agents import Message, RunOptions, RunResult, RunUpdate, SessionKey
from agenthost.agents.errors import NotFound
from agenthost.agents.sessions import MemoryManager, entry_lock

PROTOCOL = "ai_sdk.chat"
"""The kind of run a resumable chat's run is, in the run log."""

NAMESPACE = "ai-sdk-streams"
"""The store namespace of each chat's current run (its id, in the entry's meta)."""

MAX_CHAT_ID = 256
"""The longest chat id served (``generateId()`` makes 16 characters, a UUID 36)."""


def valid_chat_id(chat: str) -> bool:
    """A chat id a path can carry: 1 to :data:`MAX_CHAT_ID` printable characters."""
    return 0 < len(chat) <= MAX_CHAT_ID and chat.isprintable()


class ChatRuns:
    """How the durable runs run a chat's run (a :class:`~agenthost.adapters.durable.RunKind`),
    on any replica; and where each chat's current run is found."""

    def __init__(
        self, context: AdapterContext, streams: MemoryManager, approvals: MemoryManager | None
    ) -> None:
        self.context = context
        self.streams = streams
        self.approvals = approvals
        """The chats waiting for an approval (None: approvals off)."""

    @property
    def runs(self) -> DurableRuns:
        return self.context.durable

    async def start(
        self,
        key: SessionKey,
        message_id: str,
        messages: list[Message],
        options: RunOptions,
        resume: Resume | None,
    ) -> RunEvents[bytes]:
        """Run the chat ``key``'s turn as a durable run (stopping its run still going);
        its chunks, from the log."""
        request = {
            "chat": key.session,
            "message_id": message_id,
            "input": _dump(messages),
            "instructions": options.instructions,
            "history": _dump(resume.history) if resume is not None else [],
            "approved": sorted(resume.approved) if resume is not None else [],
            "denied": sorted(resume.denied) if resume is not None else [],
            "resumed": resume is not None,
        }
        record = RunRecord(f"aisdk_{uuid.uuid4().hex}", PROTOCOL, key.agent, key.principal, request)
        async with entry_lock(self.streams, key):
            earlier = await self.active(key)
            await self.streams.append(key, (), meta={"run": record.id})
            await self.runs.start(record)
        if earlier is not None:
            await self.runs.cancel(earlier.id)
        return view(self.runs, record)

    async def active(self, key: SessionKey) -> RunRecord | None:
        """The chat's run that still goes on, if any (its own principal's only)."""
        entry = await self.streams.get(key)
        id = entry.meta.get("run") if entry is not None else None
        if not isinstance(id, str):
            return None
        record = await self.runs.log.get(id)
        if (
            record is None
            or record.settled
            or record.protocol != PROTOCOL
            or (record.agent, record.principal) != (key.agent, key.principal)
        ):
            return None
        return record

    # -- the RunKind -------------------------------------------------------------------------

    async def updates(
        self, record: RunRecord, done: list[Message]
    ) -> AsyncGenerator[RunUpdate, None]:
        agent = self.context.agents.get(record.agent)
        if agent is None:
            raise NotFound(f"the agent {record.agent!r} is no longer served")
        request = record.request
        session = None
        if self.approvals is not None:  # a session to ask in: answers find it
            key = SessionKey(agent.name, request["chat"], record.principal)
            session = ChatSession(self.approvals, key, _load(request["history"]))
        options = RunOptions(instructions=request["instructions"])
        messages = [*_load(request["input"]), *done]
        return agent.run_stream(messages, session=session, options=options)

    async def settled(
        self, record: RunRecord, result: RunResult | None, error: BaseException | None
    ) -> None:
        return None  # the chat keeps nothing of its run (an approval asked: the session did)


def view(runs: DurableRuns, record: RunRecord, after: int = -1) -> RunEvents[bytes]:
    """The chunks of chat run ``record`` from its log: replayed from its start, then
    followed to its end."""
    request = record.request
    resume = None
    if request["resumed"]:  # the outcomes of the approvals it resumed come first
        answers = Message(role="tool", parts=[])
        resume = Resume([], answers, set(request["approved"]), set(request["denied"]))
    chunks = UIMessageChunks(record.agent, request["message_id"], resume)
    updates = cast(AsyncGenerator[LoggedUpdate, None], runs.updates(record.id, after))
    return chunks.events(updates)


def _dump(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json", exclude_none=True) for m in messages]


def _load(messages: list[dict[str, Any]]) -> list[Message]:
    return [Message.model_validate(m) for m in messages]
