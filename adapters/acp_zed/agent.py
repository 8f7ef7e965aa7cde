"""One agenthost agent as a Zed Agent Client Protocol agent (the ``acp`` package's side).

Each ``session/prompt`` runs the agent in a task of its own, streaming its
text and its own tool calls as ``session/update`` notifications;
``session/cancel`` cancels that task (the model call and tools stop) and the
prompt answers ``stopReason: cancelled``. Sessions live in a bounded memory
manager for the life of the process; the only principal is the local user.

A run that waits for its user (the ``ask_user`` tool) ends the turn with the
question as the agent's message; the user's next prompt is the answer and
the run goes on from there. A call that needs the user's approval is asked
by Zed's own permission prompt instead (:mod:`.permissions`), inside the turn.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    update_agent_message_text,
)
from acp.interfaces import Client
from acp.schema import AgentCapabilities, Implementation, PromptCapabilities

from agenthost.adapters.acp_zed.convert import (
    ContentBlock,
    question_text,
    replay,
    stop_reason,
    to_parts,
    to_usage,
    tool_finished,
    tool_started,
)
from agenthost.adapters.acp_zed.errors import to_outcome
from agenthost.adapters.acp_zed.permissions import (
    OPTIONS,
    answer_of,
    only_approvals,
    permission_call,
)
from agenthost.adapters.runs import RunConsumer, pending_in, resume_input
from agenthost.agents import (
    ANONYMOUS,
    Agent,
    MemoryManager,
    Message,
    RunResult,
    SessionKey,
    ToolCallPart,
    ToolResultPart,
)
from agenthost.agents.sessions import ManagedSession

logger = logging.getLogger("agenthost.acp_zed")


class ZedAgent:
    """Serves ``agent`` to one client over one connection."""

    def __init__(
        self,
        agent: Agent,
        memory: MemoryManager,
        *,
        version: str = "0",
        principal: str = ANONYMOUS,
    ) -> None:
        self.agent = agent
        self.memory = memory
        self.principal = principal
        self.version = version
        self._client: Client | None = None
        self._running: dict[str, asyncio.Task[PromptResponse]] = {}

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
        )
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=capabilities,
            agent_info=Implementation(
                name="agenthost", title=self.agent.name, version=self.version
            ),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        if kwargs.get("mcp_servers"):
            logger.info("the client's MCP servers are not used; the agent's tools come from config")
        session_id = uuid.uuid4().hex
        await self.memory.append(self._key(session_id), [], meta={"cwd": cwd})
        return NewSessionResponse(session_id=session_id)

    async def load_session(
        self, cwd: str, session_id: str, **kwargs: Any
    ) -> LoadSessionResponse | None:
        conversation = await self.memory.get(self._key(session_id))
        if conversation is None:
            raise _unknown_session(session_id)
        for update in replay(conversation.messages):
            await self._client_of().session_update(session_id=session_id, update=update)
        return LoadSessionResponse()

    async def prompt(
        self, session_id: str, prompt: list[ContentBlock], **kwargs: Any
    ) -> PromptResponse:
        conversation = await self.memory.get(self._key(session_id))
        if conversation is None:
            raise _unknown_session(session_id)
        if session_id in self._running:
            raise RequestError.invalid_request({"message": "a prompt is already running here"})
        parts = to_parts(prompt)
        if not parts:
            raise RequestError.invalid_params({"message": "the prompt is empty"})
        # A run that asked its user something takes this prompt as the answer.
        input = resume_input(pending_in(conversation.messages), Message(role="user", parts=parts))
        task = asyncio.create_task(self._run(session_id, input))
        self._running[session_id] = task
        try:
            await asyncio.wait([task])
        finally:
            del self._running[session_id]
            task.cancel()  # a no-op unless this request itself was cancelled
        if task.cancelled():
            return PromptResponse(stop_reason="cancelled")
        return task.result()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        task = self._running.get(session_id)
        if task is not None:
            task.cancel()

    async def _run(self, session_id: str, input: Message) -> PromptResponse:
        turn = _Turn(self.agent.name, self._client_of(), session_id)
        session = ManagedSession(self.memory, self._key(session_id))
        try:
            result = await turn.consume(self.agent.run_stream(input, session=session))
            # Approvals are asked by Zed's permission prompt, and the run goes on at once.
            while result is not None and only_approvals(result.pending):
                try:
                    answers = await self._permissions(session_id, result.pending)
                except RequestError:  # a client without the prompt: asked in text
                    await turn.say(question_text(result.pending))
                    break
                result = await turn.consume(self.agent.run_stream(answers, session=session))
        except Exception as exc:
            outcome = to_outcome(exc)
            if isinstance(outcome, RequestError):
                raise outcome from None
            if outcome != "cancelled" and str(exc):
                await turn.say(str(exc))
            return PromptResponse(stop_reason=outcome)
        assert result is not None  # failures propagate
        return PromptResponse(stop_reason=stop_reason(result), usage=to_usage(result.usage))

    async def _permissions(self, session_id: str, pending: Sequence[ToolCallPart]) -> Message:
        """The user's choice on each approval pending, asked one by one."""
        results = []
        for call in pending:
            response = await self._client_of().request_permission(
                session_id=session_id, tool_call=permission_call(call), options=OPTIONS
            )
            results.append(
                ToolResultPart(call_id=call.id, name=call.name, content=answer_of(response))
            )
        return Message(role="tool", parts=list(results))

    def _key(self, session_id: str) -> SessionKey:
        return SessionKey(self.agent.name, session_id, self.principal)

    def _client_of(self) -> Client:
        if self._client is None:  # pragma: no cover - the connection sets it first
            raise RuntimeError("no client connected")
        return self._client


def _unknown_session(session_id: str) -> RequestError:
    return RequestError.invalid_params({"message": f"unknown session {session_id!r}"})


class _Turn(RunConsumer[None]):
    """A run as the ``session/update`` notifications of one prompt turn."""

    def __init__(self, agent: str, client: Client, session_id: str) -> None:
        super().__init__(agent)
        self.client, self.session_id = client, session_id

    async def say(self, text: str) -> None:
        await self._update(update_agent_message_text(text))

    async def on_text(self, text: str) -> Sequence[None]:
        await self.say(text)
        return ()

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[None]:
        await self._update(tool_started(call))
        return ()

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[None]:
        await self._update(tool_finished(result))
        return ()

    async def on_pending(self, result: RunResult) -> Sequence[None]:
        if only_approvals(result.pending):
            return ()  # asked by the permission prompt (ZedAgent._run)
        # The question ends the turn as the agent's message; the next prompt answers it.
        await self.say(("\n\n" if result.output else "") + question_text(result.pending))
        return ()

    async def _update(self, update: Any) -> None:
        await self.client.session_update(session_id=self.session_id, update=update)
