"""The chat agent: a model, instructions and tools, with the function-calling loop.

Each step asks the model; when it asks for tools they run (concurrently when
there are several), their results go back, and the loop repeats until the
model answers without tool calls or the step limit is reached. A failing
tool does not fail the run: its error goes back to the model as the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import Any

from agents.agent import BaseAgent, transcript
from agents.errors import AgentError, MaxStepsExceeded, ToolError, UserError
from agents.messages import Message, ToolCallPart, ToolResultPart
from agents.models.base import ChatModel, ModelRequest, ModelResponse
from agents.options import AnyTool, ModelSettings, RunOptions, merge_tools
from agents.results import (
    RunFinished,
    RunResult,
    RunUpdate,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from agents.tools.base import BaseTool
from agents.tools.client import ClientTool
from agents.tools.events import LOGGING_HOOKS, ToolHooks
from agents.tools.toolsets import Toolset

DEFAULT_MAX_STEPS = 10
# Between the texts of two steps (e.g. "Let me look that up." and the answer).
STEP_SEPARATOR = "\n\n"


class ChatAgent(BaseAgent):
    """An agent driven by a chat model."""

    def __init__(
        self,
        name: str,
        model: ChatModel,
        *,
        description: str = "",
        instructions: str | None = None,
        tools: tuple[AnyTool, ...] = (),
        model_settings: ModelSettings | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        toolsets: Sequence[Toolset] = (),
        tool_hooks: Sequence[ToolHooks] = (LOGGING_HOOKS,),
    ) -> None:
        options = RunOptions(
            instructions=instructions,
            tools=merge_tools(tools),
            model_settings=model_settings or ModelSettings(),
            max_steps=max_steps,
        )
        super().__init__(name, description, options)
        self.model = model
        self.toolsets = tuple(toolsets)
        self.tool_hooks = tuple(tool_hooks)

    @property
    def supports_response_format(self) -> bool:
        return self.model.supports_response_format

    def lifespan(self) -> AbstractAsyncContextManager[Any]:
        return self._lifespan()

    @asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[None]:
        async with self.model.lifespan():
            # Toolsets are started by now (the app enters them first): a name
            # clash between them and the agent's own tools stops start-up.
            try:
                merge_tools(self.options.tools or (), *(ts.tools() for ts in self.toolsets))
            except UserError as exc:
                raise AgentError(f"agent {self.name!r}: tools: {exc}") from None
            yield

    def _tools(self, options: RunOptions) -> dict[str, AnyTool]:
        """The run's tools: the toolsets' current tools, then the agent's and the run's."""
        taken = {t.name for t in self.options.tools or ()}
        listed: list[AnyTool] = []
        for toolset in self.toolsets:
            for tool in toolset.tools():
                if tool.name not in taken:
                    taken.add(tool.name)
                    listed.append(tool)
        return {t.name: t for t in merge_tools(listed, options.tools or ())}

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        tools = self._tools(options)
        definitions = [t.definition for t in tools.values()]
        settings = options.model_settings or ModelSettings()
        messages = transcript(options.instructions, history, input)
        new_messages = list(input)
        usage = Usage()
        texts: list[str] = []
        for _ in range(options.max_steps or DEFAULT_MAX_STEPS):
            request = ModelRequest(tuple(messages), definitions, settings)
            response: ModelResponse | None = None
            if stream:
                separated = not texts
                async for event in self.model.stream(request):
                    if isinstance(event, TextDelta):
                        if not separated:
                            separated = True
                            yield TextDelta(STEP_SEPARATOR)
                        yield event
                    else:
                        response = event
            else:
                response = await self.model.request(request)
            assert response is not None, "a model stream must end with a ModelResponse"
            usage += response.usage
            messages.append(response.message)
            new_messages.append(response.message)
            if response.message.text:
                texts.append(response.message.text)
            calls = response.message.tool_calls
            # Calls of client tools are the client's to run: the run ends waiting for them.
            pending = [c for c in calls if isinstance(tools.get(c.name), ClientTool)]
            own = [c for c in calls if c not in pending]
            if own:
                for call in own:
                    yield ToolCallStarted(call)
                results = await asyncio.gather(
                    *(_run_tool(tools, call, self.tool_hooks) for call in own)
                )
                for tool_result in results:
                    yield ToolCallFinished(tool_result)
                tool_message = Message(role="tool", parts=list(results))
                messages.append(tool_message)
                new_messages.append(tool_message)
                # A forced tool_choice is met once; forcing it again would loop until max_steps.
                settings = replace(settings, tool_choice=None)
            if not own or pending:
                finish = "tool_calls" if pending else response.finish_reason
                output = STEP_SEPARATOR.join(texts)
                yield RunFinished(RunResult(output, new_messages, usage, finish, pending))
                return
        raise MaxStepsExceeded(
            f"agent {self.name!r} did not finish within {options.max_steps} model steps"
        )


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
