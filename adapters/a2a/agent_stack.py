"""IBM Agent Stack's A2A extensions (opt-in: ``AGENTHOST_A2A_AGENT_STACK`` or
an agent's ``a2a: {agent_stack: true}``).

Agent Stack (formerly the BeeAI Platform) runs A2A agents and reads a few
extensions of its own (URIs and payloads as the ``agentstack-sdk`` defines
them):

- the card's ``ui/agent-detail/v1`` (what its UI shows: description, tools,
  framework, interaction mode), ``ui/trajectory/v1`` and ``ui/error/v1``;
  an agent whose model is ``agentstack`` also declares ``services/llm/v1``
  with one demand, ``default``;
- ``services/llm/v1`` in a message's metadata: the platform's fulfilment
  (endpoint, key, model), which the run uses as its model
  (:mod:`agenthost.agents.models.provided`); never stored, never logged;
- ``ui/trajectory/v1`` on the ``working`` messages of a streamed task: a
  tool call (its arguments) and its result, one entry each (a sub-agent's too);
  the model's reasoning, one entry for each model step's (:class:`TrajectoryWriter`);
- ``interactions/approval/v1`` and ``ui/form_request/v1``: a tool call waiting
  for approval, an ``ask_user`` question and its form, and the answers
  (:mod:`agenthost.adapters.a2a.agent_stack_interactions`);
- ``ui/citation/v1``: a tool result that names its sources (a JSON object with
  ``sources``: URLs, or ``{url, title, description}`` objects) is followed by a
  ``working`` message citing them (:func:`citations_of`);
- ``ui/error/v1`` on the message of a failed task (the same text the task
  carries: an unexpected failure's details stay in the server log).

The message's key is redacted before the SDK keeps the message in the task
(:class:`AgentStackHandler`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Final

import orjson
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import Event, EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import AgentExtension, Part, SendMessageRequest, Task, TaskState
from a2a.types import Message as A2AMessage
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Struct

from agenthost.adapters.a2a import convert
from agenthost.adapters.a2a.agent_stack_interactions import (
    APPROVAL,
    BASE,
    FORM,
    BadResponse,
    answer_text,
    request_metadata,
)
from agenthost.adapters.a2a.cluster import ClusterRequestHandler
from agenthost.adapters.a2a.errors import task_end
from agenthost.adapters.a2a.executor import AgentRunExecutor, TaskWriter
from agenthost.adapters.runs import pending_in, resume_input
from agenthost.agents import (
    Agent,
    BaseAgent,
    ChatAgent,
    Message,
    RunResult,
    SubAgentUpdate,
    ToolCallFinished,
    ToolCallPart,
    ToolCallStarted,
)
from agenthost.agents.errors import kind_of
from agenthost.agents.messages import TextPart, ToolResultPart
from agenthost.agents.models.provided import ProvidedLLM, ProvidedModel, current_llm
from agenthost.agents.sessions import ManagedSession

logger = logging.getLogger(__name__)

AGENT_DETAIL: Final = f"{BASE}/ui/agent-detail/v1"
TRAJECTORY: Final = f"{BASE}/ui/trajectory/v1"
ERROR: Final = f"{BASE}/ui/error/v1"
LLM: Final = f"{BASE}/services/llm/v1"
CITATION: Final = f"{BASE}/ui/citation/v1"
DEMAND: Final = "default"
"""The name of the one LLM demand an ``agentstack``-model agent makes."""

DEFAULT_PLATFORM_URL = "http://127.0.0.1:8333"
"""Agent Stack's API when the setting names none (the SDK's default ``PLATFORM_URL``)."""

REDACTED = "[redacted]"
PROVIDED_LLM = "agenthost.a2a.agent_stack.llm"
"""Call-state key: the LLM the message provided (its key taken out of the message)."""

RESULT_CHARS = 4000
"""A tool result's characters shown in a trajectory entry, at most."""

REASONING = "Reasoning"
"""The title of a trajectory entry holding a model step's reasoning."""

REASONING_CHARS = 16000
"""A step's reasoning characters in its entry, at most (what Agent Stack's UI shows of an
entry's content: it cuts the rest)."""


def uses_platform_model(agent: Agent) -> bool:
    """Whether the agent's model is the one the platform provides (``model: agentstack``)."""
    return isinstance(agent, ChatAgent) and isinstance(agent.model, ProvidedModel)


def card_extensions(agent: Agent) -> list[AgentExtension]:
    """The extensions an Agent Stack agent's card declares."""
    detail: dict[str, Any] = {
        "interaction_mode": "multi-turn",
        "framework": "agenthost",
        "programming_language": "Python",
    }
    if isinstance(agent, BaseAgent):
        tools = agent.options.tools or ()
        detail["tools"] = [{"name": t.name, "description": t.description} for t in tools]
    extensions = [
        _extension(AGENT_DETAIL, detail),
        AgentExtension(uri=TRAJECTORY),
        AgentExtension(uri=CITATION),
        AgentExtension(uri=FORM),
        _extension(APPROVAL, {}),
        _extension(ERROR, {"include_stacktrace": False}),
    ]
    if uses_platform_model(agent):
        demand = {"description": f"The model the {agent.name} agent reasons with."}
        extensions.append(_extension(LLM, {"llm_demands": {DEMAND: demand}}, required=True))
    return extensions


def _extension(uri: str, params: dict[str, Any], *, required: bool = False) -> AgentExtension:
    struct = Struct()
    ParseDict(params, struct)
    return AgentExtension(uri=uri, params=struct, required=required)


def fulfilment(message: A2AMessage | None, platform_url: str) -> ProvidedLLM | None:
    """The LLM the message's ``services/llm/v1`` metadata provides (the ``default``
    demand's, else the first), or None; ``{platform_url}`` in its base URL is
    ``platform_url`` (as the SDK's agents read it)."""
    if message is None or LLM not in message.metadata:
        return None
    data = MessageToDict(message.metadata).get(LLM)
    given = data.get("llm_fulfillments") if isinstance(data, dict) else None
    if not isinstance(given, dict) or not given:
        return None
    chosen = given.get(DEMAND) or next(iter(given.values()))
    try:
        return ProvidedLLM(
            api_base=str(chosen["api_base"]).replace("{platform_url}", platform_url.rstrip("/")),
            api_model=str(chosen["api_model"]),
            api_key=str(chosen.get("api_key") or ""),
        )
    except (KeyError, TypeError):
        logger.warning("an Agent Stack LLM fulfilment without api_base or api_model was ignored")
        return None


def redact(message: A2AMessage) -> None:
    """Take the keys out of the message's LLM fulfilments (the task keeps the message)."""
    given = message.metadata.fields[LLM].struct_value.fields["llm_fulfillments"]
    for llm in given.struct_value.fields.values():
        if "api_key" in llm.struct_value.fields:
            llm.struct_value.fields["api_key"].string_value = REDACTED


def citations_of(content: str) -> list[dict[str, str | None]]:
    """The citations of a tool result that names its sources: a JSON object whose
    ``sources`` lists URLs or ``{url, title, description}`` objects (``snippet`` is
    read as the description); anything else cites nothing."""
    if not content.startswith("{"):
        return []
    try:
        sources = orjson.loads(content).get("sources")
    except (orjson.JSONDecodeError, AttributeError):
        return []
    cited: list[dict[str, str | None]] = []
    for source in sources if isinstance(sources, list) else ():
        if isinstance(source, str):
            source = {"url": source}
        if not isinstance(source, dict) or not (source.get("url") or source.get("title")):
            continue
        text = source.get("description") or source.get("snippet")
        cited.append(
            {
                "url": _text(source.get("url")),
                "title": _text(source.get("title")),
                "description": _text(text),
            }
        )
    return cited


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def trajectory(title: str, content: str, group_id: str | None = None) -> dict[str, Any]:
    """A message's metadata carrying one trajectory entry."""
    return {TRAJECTORY: {"title": title, "content": content, "group_id": group_id}}


class AgentStackHandler(ClusterRequestHandler):
    """Takes the LLM fulfilment out of each message before the SDK keeps the message
    (in a new task's history or a continued one's): the run reads it from the call's
    state, the task keeps the message with its key redacted. An approval or form
    response is checked here (a bad one is the request's error) and, when the message
    has no text, its answer becomes its text, so the task's history shows it."""

    platform_url = DEFAULT_PLATFORM_URL

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> A2AMessage | Task:
        self._take_metadata(params, context)
        return await super().on_message_send(params, context)

    async def on_message_send_stream(  # type: ignore[override]
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncIterator[Event]:
        self._take_metadata(params, context)
        async for event in super().on_message_send_stream(params, context):
            yield event

    def _take_metadata(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        message = params.message
        if APPROVAL in message.metadata or FORM in message.metadata:
            try:
                answer = answer_text(MessageToDict(message.metadata), ())
            except BadResponse as exc:
                raise InvalidParamsError(str(exc)) from exc
            if answer and not any(part.text for part in message.parts):
                message.parts.append(Part(text=answer))
        llm = fulfilment(message, self.platform_url)
        context.state[PROVIDED_LLM] = llm
        if llm is not None:
            redact(message)


class AgentStackExecutor(AgentRunExecutor):
    """Runs the agent with the model the message provided, writing trajectory entries,
    citations, approvals, forms and error details as Agent Stack reads them."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        token = current_llm.set(context.call_context.state.get(PROVIDED_LLM))
        try:
            await super().execute(context, event_queue)
        finally:
            current_llm.reset(token)

    def _writer(self, updater: TaskUpdater, *, whole: bool) -> TaskWriter:
        return TrajectoryWriter(
            self.agent.name, updater, whole=whole, tools=tool_descriptions(self.agent)
        )

    async def _run_input(self, message: A2AMessage, session: ManagedSession) -> Message:
        # An approval or form response answers the question the run waits for, typed by
        # that question's form (the handler checked its shape).
        pending = pending_in(await session.load())
        answer = answer_text(MessageToDict(message.metadata), pending) if pending else None
        parts = [TextPart(text=answer)] if answer is not None else None
        reply = Message(
            role="user",
            parts=parts or await convert.from_parts_off_loop(message.parts),
            id=message.message_id or None,
        )
        return resume_input(pending, reply)


def tool_descriptions(agent: Agent) -> dict[str, str]:
    """The agent's tools' descriptions by name (an approval request shows them)."""
    tools = (agent.options.tools or ()) if isinstance(agent, BaseAgent) else ()
    return {tool.name: tool.description for tool in tools}


class TrajectoryWriter(TaskWriter):
    """A task's updates with Agent Stack's trajectory entries, citations, approvals,
    forms and error details.

    The model's reasoning is held and sent as one entry per model step (titled
    :data:`REASONING`, no group), when the step's reasoning ends: at its text, its
    tool calls, the run's end or failure. An entry per streamed piece would be a
    status update (and a message kept in the task) per token, and Agent Stack's UI
    shows each piece of a group as a block of its own, a few words each; the SDK's
    own agents send one entry per finished step.
    """

    def __init__(
        self, agent: str, updater: TaskUpdater, *, whole: bool, tools: Mapping[str, str]
    ) -> None:
        super().__init__(agent, updater, whole=whole)
        self.tools = tools
        self.thought: list[str] = []  # the step's reasoning not sent yet

    async def on_reasoning(self, text: str) -> Sequence[None]:
        self.thought.append(text)
        return ()

    async def on_text(self, text: str) -> Sequence[None]:
        if self.thought:
            await self._reasoned()
        return await super().on_text(text)

    async def on_tool_started(self, call: ToolCallPart) -> Sequence[None]:
        await self._reasoned()
        await self._entry(call.name, call.arguments, call.id)
        return ()

    async def on_tool_finished(self, result: ToolResultPart) -> Sequence[None]:
        await self._entry(result.name, result.content[:RESULT_CHARS], result.call_id)
        if cited := citations_of(result.content):
            await self._status({CITATION: {"citations": cited}})
        return ()

    async def on_sub_agent(self, update: SubAgentUpdate) -> Sequence[None]:
        # The tool calls of agents working for it are entries too (not the text notes
        # of plain A2A, which the UI would add to the answer), titled by who calls; the
        # group is theirs (a call id is only unique within one model's answers).
        workers, inner = [update.agent], update.update
        while isinstance(inner, SubAgentUpdate):
            workers.append(inner.agent)
            inner = inner.update
        if isinstance(inner, ToolCallStarted):
            call = inner.call
            name, content, call_id = call.name, call.arguments, call.id
        elif isinstance(inner, ToolCallFinished):
            done = inner.result
            name, content, call_id = done.name, done.content[:RESULT_CHARS], done.call_id
        else:
            return ()
        await self._entry(": ".join([*workers, name]), content, ": ".join([*workers, call_id]))
        return ()

    async def on_pending(self, result: RunResult) -> Sequence[None]:
        await self._reasoned()
        await self.chunks.close(result)
        calls = {
            c.id: c for m in result.new_messages if m.role == "assistant" for c in m.tool_calls
        }
        text, metadata = request_metadata(result.pending, calls, self.tools)
        message = self.updater.new_agent_message([Part(text=text)], metadata=metadata)
        await self.updater.requires_input(message)
        return ()

    async def on_error(self, exc: Exception) -> Sequence[None]:
        await self._reasoned()  # what the model thought before it failed
        raise exc

    async def fail(self, exc: BaseException) -> None:
        error = exc if isinstance(exc, Exception) else RuntimeError(str(exc))
        state, text, metadata = task_end(error, self.agent)
        metadata[ERROR] = {"error": {"title": str(kind_of(error).value), "message": text}}
        message = self.updater.new_agent_message([Part(text=text)], metadata=metadata)
        await self.updater.update_status(state, message)

    async def _entry(self, tool: str, content: str, group: str) -> None:
        await self._status(trajectory(tool, content, group))

    async def _reasoned(self) -> None:
        """The reasoning held since the last entry, as one entry (none if blank)."""
        content, self.thought = "".join(self.thought).strip(), []
        if content:
            await self._status(trajectory(REASONING, content[:REASONING_CHARS]))

    async def _status(self, metadata: dict[str, Any]) -> None:
        # No text part, as the SDK's own trajectory and citation messages: Agent Stack's
        # UI shows the metadata, and would add a note's text to the answer.
        note = self.updater.new_agent_message([], metadata=metadata)
        await self.updater.update_status(TaskState.TASK_STATE_WORKING, note)
