"""Google ADK agents and workflows (any ADK ``BaseNode``), run through ADK's ``Runner``.

agenthost's session is the one source of truth: each run gets a fresh ADK
session in the wrapper's own in-memory session service, seeded with the
conversation so far (user and model turns, tool calls and their results as
ADK events), and dropped when the run ends. History thus continues per
agenthost session (in-process or in Redis, over any protocol) and never
leaks across sessions; ADK session *state* lives for one run only.

Streaming uses ADK's SSE mode: partial events become text deltas, function
calls and responses become tool call updates; the state the run's events
wrote (their ``actions.state_delta``) is a :class:`~agenthost.agents.StateSnapshot`
after each event that changed its JSON-safe part
(:func:`~agenthost.agents.frameworks.states.json_state`), without the ``app:``
and ``user:`` keys, which ADK shares beyond the session (state seeded from
elsewhere is not shown: each run's ADK session starts empty). Usage is summed from the
model events' ``usage_metadata``. A cancelled run cancels the task that
iterates ``Runner.run_async``, which closes the model's stream. Extra
instructions of a run (system messages, ``instructions``) reach every model
call of the run through a runner plugin.

ADK's model is any of its own: ``LiteLlm(model="openai/NAME", api_base=URL,
api_key=KEY)`` talks to any OpenAI-compatible server (set
``LITELLM_LOCAL_MODEL_COST_MAP=True`` so LiteLLM reads its price list from
the package instead of fetching it at import).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any

try:
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.agents.run_config import RunConfig
    from google.adk.apps import App
    from google.adk.events import Event
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.plugins import BasePlugin
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService, Session
    from google.adk.workflow import BaseNode
    from google.genai import types
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "serving Google ADK agents needs the 'adk' extra: pip install 'agenthost[adk]'"
    ) from exc

import orjson

from agenthost.agents.agent import BaseAgent
from agenthost.agents.errors import UserError
from agenthost.agents.frameworks import TypeRegistry
from agenthost.agents.frameworks.states import json_state
from agenthost.agents.frameworks.streams import Finished, stream_in_task
from agenthost.agents.messages import Message, Part, TextPart, ToolCallPart, ToolResultPart
from agenthost.agents.options import RunOptions
from agenthost.agents.results import (
    RunFinished,
    RunResult,
    RunUpdate,
    StateSnapshot,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)

APP = "agenthost"
USER = "agenthost"  # one ADK user: sessions are per run, agenthost keys who owns what
# State keys ADK shares beyond one session (app-wide, per user): never shown.
SHARED_PREFIXES = ("app:", "user:")
# Between the texts of two model messages of one run, as for chat agents' steps.
SEPARATOR = "\n\n"

# The type of RunConfig's field (its module imports it without re-exporting it).
StreamingMode = type(RunConfig().streaming_mode)

_instructions: ContextVar[str | None] = ContextVar("agenthost_adk_instructions", default=None)


class _RunInstructions(BasePlugin):
    """Adds the run's extra instructions to each model request of the run."""

    def __init__(self) -> None:
        super().__init__(name="agenthost_instructions")

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        if text := _instructions.get():
            llm_request.append_instructions([text])
        return None


class ADKAgent(BaseAgent):
    """A Google ADK agent (or workflow) behind the uniform agent interface."""

    def __init__(self, name: str, agent: BaseNode, *, description: str = "") -> None:
        super().__init__(name, description or agent.description)
        self.agent = agent
        self.sessions = InMemorySessionService()
        app = App(name=APP, root_agent=agent, plugins=[_RunInstructions()])
        self.runner = Runner(app=app, session_service=self.sessions)

    def lifespan(self) -> AbstractAsyncContextManager[Any]:
        return self._closing_runner()

    @asynccontextmanager
    async def _closing_runner(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.runner.close()  # its toolsets (MCP connections) and plugins

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        if not input or input[-1].role != "user":
            raise UserError("an ADK agent needs a user message last", param="messages")
        earlier = [*history, *input[:-1]]
        system = [m.text for m in earlier if m.role == "system" and m.text]
        instructions = SEPARATOR.join([*system, options.instructions or ""]).strip()
        run = partial(self._invoke, earlier, input[-1], instructions or None, stream)
        produced: tuple[list[Message], Usage] = ([], Usage())
        async for item in stream_in_task(run):
            if isinstance(item, Finished):
                produced = item.value
            else:
                yield item
        replies, usage = produced
        output = SEPARATOR.join(m.text for m in replies if m.role == "assistant" and m.text)
        yield RunFinished(RunResult(output, [*input, *replies], usage))

    async def _invoke(
        self,
        earlier: Sequence[Message],
        prompt: Message,
        instructions: str | None,
        stream: bool,
        emit: Callable[[RunUpdate], None],
    ) -> tuple[list[Message], Usage]:
        """One ADK run in a session seeded with ``earlier``; emits updates when streaming."""
        _instructions.set(instructions)  # this task's context: the run's model calls see it
        session = await self.sessions.create_session(
            app_name=APP, user_id=USER, session_id=uuid.uuid4().hex
        )
        try:
            for event in to_events(earlier, self.agent.name):
                await self.sessions.append_event(session, event)
            return await self._events(session, prompt, stream, emit)
        finally:
            await self.sessions.delete_session(app_name=APP, user_id=USER, session_id=session.id)

    async def _events(
        self, session: Session, prompt: Message, stream: bool, emit: Callable[[RunUpdate], None]
    ) -> tuple[list[Message], Usage]:
        mode = StreamingMode.SSE if stream else StreamingMode.NONE
        message = types.Content(role="user", parts=[types.Part(text=prompt.text)])
        events = self.runner.run_async(
            user_id=USER,
            session_id=session.id,
            new_message=message,
            run_config=RunConfig(streaming_mode=mode),
        )
        replies: list[Message] = []
        usage = Usage()
        streamed = ""  # the text of the message being streamed, from partial events
        shown = False  # whether any text was streamed yet (a separator goes before the next)
        state: dict[str, Any] = {}  # what the run's events wrote to the session's state
        snapshot: dict[str, Any] = {}  # its JSON-safe part, as last sent
        async for event in events:
            if event.partial:
                if text := _text_of(event):
                    if not streamed and shown:
                        emit(TextDelta(SEPARATOR))
                    streamed += text
                    shown = True
                    emit(TextDelta(text))
                continue
            if (counted := event.usage_metadata) is not None:
                usage += Usage(
                    counted.prompt_token_count or 0, counted.candidates_token_count or 0, 1
                )
            converted = from_event(event)
            for reply in converted:
                if reply.role == "assistant" and reply.text and not streamed:
                    # A whole message no partial event streamed (an agent that calls no model).
                    if shown:
                        emit(TextDelta(SEPARATOR))
                    shown = True
                    emit(TextDelta(reply.text))
                for call in reply.tool_calls:
                    emit(ToolCallStarted(call))
                for result in reply.parts:
                    if isinstance(result, ToolResultPart):
                        emit(ToolCallFinished(result))
            streamed = ""
            replies += converted
            if written := event.actions.state_delta:
                state.update(
                    (k, v) for k, v in written.items() if not k.startswith(SHARED_PREFIXES)
                )
                if (changed := json_state(state)) != snapshot:
                    snapshot = changed
                    emit(StateSnapshot(snapshot))
        return replies, usage


def _text_of(event: Event) -> str:
    parts = event.content.parts if event.content and event.content.parts else []
    return "".join(p.text for p in parts if p.text and not p.thought)


def to_events(messages: Sequence[Message], author: str) -> list[Event]:
    """Our conversation as ADK session events (model turns authored by ``author``)."""
    events: list[Event] = []
    for message in messages:
        if message.role == "user":
            content = types.Content(role="user", parts=[types.Part(text=message.text)])
            events.append(Event(author="user", content=content))
        elif message.role == "assistant":
            parts = [types.Part(text=message.text)] if message.text else []
            parts += [
                types.Part(
                    function_call=types.FunctionCall(
                        id=c.id, name=c.name, args=_arguments(c.arguments)
                    )
                )
                for c in message.tool_calls
            ]
            if parts:
                events.append(
                    Event(author=author, content=types.Content(role="model", parts=parts))
                )
        elif message.role == "tool":
            responses = [
                types.Part(
                    function_response=types.FunctionResponse(
                        id=p.call_id, name=p.name, response={"result": p.content}
                    )
                )
                for p in message.parts
                if isinstance(p, ToolResultPart)
            ]
            if responses:
                content = types.Content(role="user", parts=responses)
                events.append(Event(author=author, content=content))
    return events


def from_event(event: Event) -> list[Message]:
    """A whole (not partial) ADK event as our messages: model text and tool calls, tool results."""
    if event.content is None or not event.content.parts:
        return []
    said: list[Part] = []
    results: list[Part] = []
    for part in event.content.parts:
        if part.text and not part.thought and event.author != "user":
            said.append(TextPart(text=part.text))
        elif (call := part.function_call) is not None:
            arguments = orjson.dumps(call.args or {}).decode()
            said.append(ToolCallPart(id=call.id or "", name=call.name or "", arguments=arguments))
        elif (response := part.function_response) is not None:
            content = _result_text(response.response)
            results.append(
                ToolResultPart(call_id=response.id or "", name=response.name or "", content=content)
            )
    converted = [Message(role="assistant", parts=said)] if said else []
    return converted + ([Message(role="tool", parts=results)] if results else [])


def _result_text(response: dict[str, Any] | None) -> str:
    """A tool's result as text: ADK wraps a plain return value as ``{"result": value}``."""
    if response is not None and set(response) == {"result"}:
        value = response["result"]
        return value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    return orjson.dumps(response or {}, default=str).decode()


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def register(registry: TypeRegistry) -> None:
    def wrap(obj: BaseNode, name: str, description: str) -> ADKAgent:
        return ADKAgent(name, obj, description=description)

    registry.register_type(BaseNode, wrap)
