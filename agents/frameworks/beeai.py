"""BeeAI Framework agents (``beeai_framework.agents.BaseAgent``), run through their emitter.

Each run works on a clone of the configured agent, whose memory is reset
and seeded with the agenthost session: BeeAI's own serve sets
``agent.memory`` on the one shared agent, so two sessions would mix (and a
BeeAI agent refuses a second concurrent run). The run's events become
run updates: the ``final_answer`` deltas of a ``RequirementAgent`` are the
text (the whole answer at once for agents that stream none), and each tool's
``start`` / ``success`` / ``error`` a :class:`ToolCallStarted` /
:class:`ToolCallFinished`. Usage sums the chat model's outputs. Closing
the run aborts the framework's run (its abort signal), which cancels the
model call and its HTTP stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from functools import partial
from typing import Any, cast

try:
    from beeai_framework.agents import AnyAgent
    from beeai_framework.agents import BaseAgent as BeeAIBaseAgent
    from beeai_framework.agents.requirement.events import RequirementAgentFinalAnswerEvent
    from beeai_framework.backend import (
        AnyMessage,
        AssistantMessage,
        ChatModel,
        ChatModelSuccessEvent,
        MessageTextContent,
        MessageToolCallContent,
        MessageToolResultContent,
        SystemMessage,
        ToolMessage,
        UserMessage,
    )
    from beeai_framework.emitter import EventMeta
    from beeai_framework.tools import Tool, ToolErrorEvent, ToolStartEvent, ToolSuccessEvent
    from beeai_framework.utils import AbortController
    from beeai_framework.utils.cloneable import Cloneable
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "serving BeeAI Framework agents needs the 'beeai' extra: pip install 'agenthost[beeai]'"
    ) from exc

from agenthost.agents.agent import BaseAgent
from agenthost.agents.errors import UserError
from agenthost.agents.frameworks import TypeRegistry
from agenthost.agents.frameworks.streams import Finished, stream_in_task
from agenthost.agents.messages import Message, ToolCallPart, ToolResultPart
from agenthost.agents.options import RunOptions
from agenthost.agents.results import (
    RunFinished,
    RunResult,
    RunUpdate,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)

FINAL_ANSWER = "final_answer"
"""The tool through which BeeAI's agents give their answer: not a tool call to show."""


class BeeAIAgent(BaseAgent):
    """A BeeAI Framework agent behind the uniform agent interface."""

    def __init__(self, name: str, agent: AnyAgent, *, description: str = "") -> None:
        if not isinstance(agent, Cloneable):
            raise TypeError(
                f"BeeAI agents are served from clones: {type(agent).__name__} has no clone()"
            )
        super().__init__(name, description or agent.meta.description)
        self.agent = agent

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        if not input or input[-1].role != "user":
            raise UserError("a BeeAI agent needs a user message last", param="input")
        earlier = [*history, *input[:-1]]
        if options.instructions:
            earlier.insert(0, Message.system(options.instructions))
        produce = partial(self._produce, to_beeai(earlier), to_beeai(input[-1:]))
        async for item in stream_in_task(produce):
            if isinstance(item, Finished):
                output, produced, usage = item.value
            elif stream:
                yield item
        yield RunFinished(RunResult(output, [*input, *produced, Message.assistant(output)], usage))

    async def _produce(
        self, seed: list[AnyMessage], prompt: list[AnyMessage], emit: Any
    ) -> tuple[str, list[Message], Usage]:
        agent: AnyAgent = await cast(Cloneable, self.agent).clone()  # type: ignore[assignment]
        agent.memory.reset()
        await agent.memory.add_many(seed)
        events = _Events(emit)
        controller = AbortController()
        try:
            result = await agent.run(prompt, signal=controller.signal).on("*.*", events.handle)
        finally:
            controller.abort("the agenthost run was closed")  # a no-op once the run is over
        output = result.last_message.text if result.output else ""
        if not events.streamed and output:
            emit(TextDelta(output))
        produced = from_beeai(agent.memory.messages[len(seed) + len(prompt) :])
        return output, produced, events.usage


class _Events:
    """The updates and usage of one run's events."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit
        self.streamed = False
        self.usage = Usage()

    def handle(self, data: Any, meta: EventMeta) -> None:
        if isinstance(data, RequirementAgentFinalAnswerEvent) and data.delta:
            self.streamed = True
            self.emit(TextDelta(data.delta))
        elif isinstance(data, ChatModelSuccessEvent) and isinstance(meta.creator, ChatModel):
            usage = data.value.usage
            self.usage += Usage(
                usage.prompt_tokens if usage else 0, usage.completion_tokens if usage else 0, 1
            )
        elif isinstance(meta.creator, Tool) and meta.creator.name != FINAL_ANSWER:
            call = meta.context.get("tool_call_msg")
            if not isinstance(call, MessageToolCallContent):
                return  # a tool run outside of an agent's tool call
            if isinstance(data, ToolStartEvent):
                self.emit(ToolCallStarted(_call_of(call)))
            elif isinstance(data, ToolSuccessEvent):
                text = data.output.get_text_content()
                self.emit(
                    ToolCallFinished(
                        ToolResultPart(call_id=call.id, name=call.tool_name, content=text)
                    )
                )
            elif isinstance(data, ToolErrorEvent):
                error = ToolResultPart(
                    call_id=call.id,
                    name=call.tool_name,
                    content=data.error.explain(),
                    is_error=True,
                )
                self.emit(ToolCallFinished(error))


def _call_of(call: MessageToolCallContent) -> ToolCallPart:
    return ToolCallPart(id=call.id, name=call.tool_name, arguments=call.args or "{}")


def to_beeai(messages: Sequence[Message]) -> list[AnyMessage]:
    """Our conversation as BeeAI's messages."""
    converted: list[AnyMessage] = []
    for message in messages:
        if message.role == "system":
            converted.append(SystemMessage(message.text))
        elif message.role == "user":
            converted.append(UserMessage(message.text))
        elif message.role == "tool":
            results = [
                MessageToolResultContent(result=p.content, tool_name=p.name, tool_call_id=p.call_id)
                for p in message.parts
                if isinstance(p, ToolResultPart)
            ]
            converted.append(ToolMessage(results))
        else:
            content: list[Any] = [MessageTextContent(text=message.text)] if message.text else []
            content += [
                MessageToolCallContent(id=c.id, tool_name=c.name, args=c.arguments)
                for c in message.tool_calls
            ]
            converted.append(AssistantMessage(content))
    return converted


def from_beeai(messages: Sequence[AnyMessage]) -> list[Message]:
    """The tool calls and results among BeeAI's messages, as ours.

    The answer itself is left out: BeeAI keeps it as a ``final_answer`` tool
    call, and the run's output is appended as a plain assistant message instead.
    """
    converted: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            calls = [c for c in message.get_tool_calls() if c.tool_name != FINAL_ANSWER]
            if calls:
                converted.append(Message(role="assistant", parts=[_call_of(c) for c in calls]))
        elif isinstance(message, ToolMessage):
            results = [
                ToolResultPart(
                    call_id=r.tool_call_id,
                    name=r.tool_name,
                    content=r.result if isinstance(r.result, str) else json.dumps(r.result),
                )
                for r in message.get_tool_results()
                if r.tool_name != FINAL_ANSWER
            ]
            if results:
                converted.append(Message(role="tool", parts=list(results)))
    return converted


def register(registry: TypeRegistry) -> None:
    def wrap(obj: AnyAgent, name: str, description: str) -> BeeAIAgent:
        return BeeAIAgent(name, obj, description=description)

    registry.register_type(BeeAIBaseAgent, wrap)
