"""The chat agent: a model, instructions and tools, with the function-calling loop.

Each step asks the model; when it asks for tools they run (concurrently when
there are several), their results go back, and the loop repeats until the
model answers without tool calls or the step limit is reached. A failing
tool does not fail the run: its error goes back to the model as the result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import replace
from functools import partial
from typing import Any, Protocol, Self

from agenthost.agents.agent import Agent, BaseAgent, transcript
from agenthost.agents.composition.calls import CallsDone, run_calls
from agenthost.agents.composition.handoff import AgentTool
from agenthost.agents.errors import AgentError, MaxStepsExceeded, ToolError, UserError
from agenthost.agents.history import HistoryContext, MemoryStrategy
from agenthost.agents.hosting import Hosting
from agenthost.agents.limits import RunLimits
from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart
from agenthost.agents.models.base import ChatModel, ModelRequest, ModelResponse
from agenthost.agents.options import AnyTool, ModelSettings, RunOptions, merge_tools
from agenthost.agents.results import (
    ReasoningDelta,
    RunFinished,
    RunResult,
    RunUpdate,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from agenthost.agents.sessions import NotedSession, Session
from agenthost.agents.tools.approvals import (
    CANNOT_ASK,
    approval_request,
    awaiting_approval,
    mark_asked,
    needs_approval,
    refusal,
    resolve_approvals,
)
from agenthost.agents.tools.base import BaseTool
from agenthost.agents.tools.client import ClientTool
from agenthost.agents.tools.events import LOGGING_HOOKS, ToolHooks
from agenthost.agents.tools.toolsets import Toolset

DEFAULT_MAX_STEPS = 10
# Between the texts of two steps (e.g. "Let me look that up." and the answer).
STEP_SEPARATOR = "\n\n"


class InstructionsTemplate(Protocol):
    """Instructions rendered for every run (a prompt template with computed values)."""

    def render(self, *, agent: str, tools: Sequence[str]) -> str: ...


class ChatAgent(BaseAgent):
    """An agent driven by a chat model.

    ``memory`` chooses what of the conversation the model sees (everything
    by default); ``instructions`` may be a template rendered for each run.
    ``tool_hooks`` watch its tool calls, and ``hosting``'s after them (with
    its bounds and its observer of the model's requests, which each request
    carries to the model).
    """

    def __init__(
        self,
        name: str,
        model: ChatModel,
        *,
        description: str = "",
        instructions: str | InstructionsTemplate | None = None,
        tools: tuple[AnyTool, ...] = (),
        model_settings: ModelSettings | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        toolsets: Sequence[Toolset] = (),
        tool_hooks: Sequence[ToolHooks] = (LOGGING_HOOKS,),
        memory: MemoryStrategy | None = None,
        limits: RunLimits | None = None,
        hosting: Hosting | None = None,
    ) -> None:
        self.template = (
            None if instructions is None or isinstance(instructions, str) else instructions
        )
        options = RunOptions(
            instructions=instructions if isinstance(instructions, str) else None,
            tools=merge_tools(tools),
            model_settings=model_settings or ModelSettings(),
            max_steps=max_steps,
        )
        super().__init__(name, description, options, limits, hosting=hosting)
        self.model = model
        self.toolsets = tuple(toolsets)
        self._own_hooks = tuple(tool_hooks)
        self.tool_hooks = (*self._own_hooks, *self.hosting.tool_hooks(name))
        self.upstream = self.hosting.upstream_observer(name)
        """What watches the model's requests (given with each :class:`ModelRequest`)."""
        self.memory = memory

    def _served_copy(self, hosting: Hosting, serve: Callable[[Agent], Agent]) -> Self:
        agent = super()._served_copy(hosting, serve)
        agent.tool_hooks = (*self._own_hooks, *hosting.tool_hooks(self.name))
        agent.upstream = hosting.upstream_observer(self.name)
        tools = self.options.tools or ()
        if any(isinstance(t, AgentTool) for t in tools):
            # Handoffs run the served form of their agents.
            handoffs = [_served_tool(t, serve) for t in tools]
            agent.options = replace(self.options, tools=tuple(handoffs))
        return agent

    @property
    def supports_response_format(self) -> bool:
        return self.model.supports_response_format

    @property
    def relays_upstream_params(self) -> bool:
        """Whether ``ModelSettings.upstream_params`` reach the model's upstream."""
        return bool(getattr(self.model, "relays_upstream_params", False))

    def lifespan(self) -> AbstractAsyncContextManager[Any]:
        return self._lifespan()

    @asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[None]:
        summariser: ChatModel | None = getattr(self.memory, "model", None)
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self.model.lifespan())
            if summariser is not None and summariser is not self.model:
                await stack.enter_async_context(summariser.lifespan())
            # Toolsets are started by now (the app enters them first): a name
            # clash between them and the agent's own tools stops start-up.
            try:
                merge_tools(self.options.tools or (), *(ts.tools() for ts in self.toolsets))
            except UserError as exc:
                raise AgentError(f"agent {self.name!r}: tools: {exc}") from None
            yield

    def _tools(self, options: RunOptions) -> dict[str, AnyTool]:
        """The run's tools: the toolsets' current tools, then the agent's and the run's."""
        if not self.toolsets and not options.tools:
            return {}  # an agent with no tools (echo's): nothing to merge
        taken = {t.name for t in self.options.tools or ()}
        listed: list[AnyTool] = []
        for toolset in self.toolsets:
            for tool in toolset.tools():
                if tool.name not in taken:
                    taken.add(tool.name)
                    listed.append(tool)
        return {t.name: t for t in merge_tools(listed, options.tools or ())}

    def _instructions(self, options: RunOptions, tools: Sequence[str]) -> str | None:
        if self.template is None:
            return options.instructions
        rendered = self.template.render(agent=self.name, tools=tools)
        return "\n\n".join(t for t in (rendered, options.instructions) if t) or None

    async def _memory_context(self, session: Session | None) -> HistoryContext | None:
        """The memory strategy's view of the run; None without a strategy."""
        if self.memory is None:
            return None
        notes = await session.load_notes() if isinstance(session, NotedSession) else None
        return HistoryContext(self.model, notes, observer=self.upstream)

    async def _visible(
        self, messages: list[Message], context: HistoryContext, session: Session | None
    ) -> list[Message]:
        """What the model sees: the memory strategy's choice (notes saved at once)."""
        if self.memory is None:
            return messages
        visible = await self.memory.select(messages, context)
        if context.changed_notes and isinstance(session, NotedSession) and context.notes:
            await session.save_notes(context.notes)
            context.changed_notes = False
        return visible

    def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        return self._session_turn(history, input, options, stream=stream, session=None)

    async def _session_turn(
        self,
        history: list[Message],
        input: list[Message],
        options: RunOptions,
        *,
        stream: bool,
        session: Session | None,
    ) -> AsyncIterator[RunUpdate]:
        tools = self._tools(options)
        definitions = [t.definition for t in tools.values()]
        settings = options.model_settings or ModelSettings()
        usage = Usage()
        approved: list[ToolCallPart] = []
        asking = session is not None and options.can_ask  # else approvals are refused
        if asking and (waiting := awaiting_approval(history, tools)):
            input, approved = resolve_approvals(input, waiting)
        messages = transcript(self._instructions(options, list(tools)), history, input)
        new_messages = list(input)
        if approved:  # the user approved these calls: they run now, as if just made
            for call in approved:
                yield ToolCallStarted(call)
            async for item in self._run_own(approved, tools, messages, stream=stream):
                if isinstance(item, CallsDone):
                    usage += item.usage
                    tool_message = Message(role="tool", parts=list(item.results))
                    messages.append(tool_message)
                    new_messages.append(tool_message)
                else:
                    yield item
        texts: list[str] = []
        reasoning: list[str] = []  # each step's, kept out of the messages
        memory = await self._memory_context(session)
        for _ in range(options.max_steps or DEFAULT_MAX_STEPS):
            if memory is None:  # no strategy: the model sees the whole transcript
                visible = messages
            else:
                visible = await self._visible(messages, memory, session)
                usage, memory.usage = usage + memory.usage, Usage()
            request = ModelRequest(tuple(visible), definitions, settings, self.upstream)
            response: ModelResponse | None = None
            if stream:
                separated = not texts
                thought_apart = not reasoning  # a later step's reasoning: separated too
                client_calls: dict[int, int] = {}  # the model's index → the client's
                async for event in self.model.stream(request):
                    if isinstance(event, TextDelta):
                        if not separated:
                            separated = True
                            yield TextDelta(STEP_SEPARATOR)
                        yield event
                    elif isinstance(event, ReasoningDelta):
                        if not thought_apart:
                            thought_apart = True
                            yield ReasoningDelta(STEP_SEPARATOR)
                        yield event
                    elif isinstance(event, ToolCallDelta):
                        # Only a client tool's call is the client's to see as it streams.
                        if isinstance(tools.get(event.name), ClientTool):
                            index = client_calls.setdefault(event.index, len(client_calls))
                            yield replace(event, index=index)
                    else:
                        response = event
            else:
                response = await self.model.request(request)
            assert response is not None, "a model stream must end with a ModelResponse"
            usage += response.usage
            messages.append(response.message)
            new_messages.append(response.message)
            if text := response.message.text:
                texts.append(text)
            if response.reasoning:
                reasoning.append(response.reasoning)
            calls = response.message.tool_calls
            # Calls of client tools are the client's to run: the run ends waiting for them.
            pending = [c for c in calls if isinstance(tools.get(c.name), ClientTool)]
            # Calls of tools that need the user's approval: asked (as ask_user) when the
            # run has a session to resume in, else refused at once (agents/tools/approvals.py).
            asked = [c for c in calls if c not in pending and needs_approval(tools.get(c.name))]
            own = [c for c in calls if c not in pending and c not in asked]
            refused = []
            if asking and asked:
                pending += [approval_request(c) for c in asked]
                # Marked in the stored turn, so a protocol that reads what the conversation
                # waits for (adapters' pending_in) sees these calls as the questions asked.
                marked = mark_asked(response.message, asked)
                messages[-1] = new_messages[-1] = marked
            elif asked:
                refused = [refusal(c, CANNOT_ASK) for c in asked]
            if own or refused:
                results: list[ToolResultPart] = list(refused)
                for call in own:
                    yield ToolCallStarted(call)
                async for item in self._run_own(own, tools, messages, stream=stream):
                    if isinstance(item, CallsDone):
                        usage += item.usage
                        results = [*item.results, *refused]
                    else:
                        yield item
                tool_message = Message(role="tool", parts=list(results))
                messages.append(tool_message)
                new_messages.append(tool_message)
                # A forced tool_choice is met once; forcing it again would loop until max_steps.
                settings = replace(settings, tool_choice=None)
            if not (own or refused) or pending:
                finish = "tool_calls" if pending else response.finish_reason
                output = STEP_SEPARATOR.join(texts)
                thought = STEP_SEPARATOR.join(reasoning)
                result = RunResult(output, new_messages, usage, finish, pending, reasoning=thought)
                yield RunFinished(result)
                return
        raise MaxStepsExceeded(
            f"agent {self.name!r} did not finish within {options.max_steps} model steps"
        )

    async def _run_own(
        self,
        calls: list[ToolCallPart],
        tools: Mapping[str, AnyTool],
        messages: list[Message],
        *,
        stream: bool,
    ) -> AsyncIterator[RunUpdate | CallsDone]:
        """Run the agent's own ``calls``: their progress (streamed runs), each one's
        :class:`ToolCallFinished`, then :class:`CallsDone` (no calls: nothing)."""
        if not calls:
            return
        done: CallsDone | None = None
        run_tool = partial(_run_tool, tools, hooks=self.tool_hooks)
        async for item in run_calls(calls, tools, messages, run_tool):
            if isinstance(item, CallsDone):
                done = item
            elif stream:
                yield item
        assert done is not None, "run_calls ends with CallsDone"
        for tool_result in done.results:
            yield ToolCallFinished(tool_result)
        yield done


def _served_tool(tool: AnyTool, serve: Callable[[Agent], Agent]) -> AnyTool:
    if not isinstance(tool, AgentTool):
        return tool
    served = serve(tool.agent)
    return tool if served is tool.agent else AgentTool(served, description=tool.description)


async def _run_tool(
    tools: Mapping[str, AnyTool], call: ToolCallPart, hooks: Sequence[ToolHooks]
) -> ToolResultPart:
    tool = tools.get(call.name)
    if not isinstance(tool, BaseTool):
        content, is_error = f"unknown tool {call.name!r}; available: {sorted(tools)}", True
    else:
        try:
            content, is_error = await tool.run(call.arguments, call_id=call.id, hooks=hooks), False
        except ToolError as exc:
            content, is_error = str(exc), True
    return ToolResultPart(call_id=call.id, name=call.name, content=content, is_error=is_error)
