"""The OpenAI Agents SDK's ``Agent``, run and streamed through its ``Runner``.

The SDK owns the top-level import name ``agents``; agenthost lives under
``agenthost.`` so both install side by side. The conversation goes to the
SDK as Responses-style input items, and the items its run produced come
back as our messages, so sessions keep tool calls whichever protocol asked.
Tool calls stream as :class:`ToolCallStarted` / :class:`ToolCallFinished`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

try:
    from openai.types.responses import ResponseTextDeltaEvent

    import agents as sdk
    from agents.items import ItemHelpers, MessageOutputItem, ToolCallItem, ToolCallOutputItem
    from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "serving OpenAI Agents SDK agents needs the 'openai-agents' extra: "
        "pip install 'agenthost[openai-agents]'"
    ) from exc

from agenthost.agents.agent import BaseAgent
from agenthost.agents.errors import UserError
from agenthost.agents.frameworks import TypeRegistry
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


class OpenAIAgentsAgent(BaseAgent):
    """An OpenAI Agents SDK agent behind the uniform agent interface."""

    def __init__(self, name: str, agent: sdk.Agent, *, description: str = "") -> None:
        super().__init__(name, description or (agent.handoff_description or ""))
        self.agent = agent

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        if not input or input[-1].role != "user":
            raise UserError("an OpenAI Agents SDK agent needs a user message last", param="input")
        agent = self.agent
        if options.instructions:
            agent = agent.clone(instructions=options.instructions)
        items = to_input_items([*history, *input])
        new: list[Message] = list(input)
        if stream:
            streamed = sdk.Runner.run_streamed(agent, items)
            try:
                async for event in streamed.stream_events():
                    update = _update_of(event)
                    if update is not None:
                        yield update
            finally:
                streamed.cancel()
            result: sdk.RunResultBase = streamed
        else:
            result = await sdk.Runner.run(agent, items)
        new += from_run_items(result.new_items)
        usage = result.context_wrapper.usage
        output = result.final_output
        text = output if isinstance(output, str) else json.dumps(output, default=str)
        yield RunFinished(
            RunResult(text, new, Usage(usage.input_tokens, usage.output_tokens, usage.requests))
        )


def _update_of(event: object) -> RunUpdate | None:
    if isinstance(event, RawResponsesStreamEvent):
        if isinstance(event.data, ResponseTextDeltaEvent):
            return TextDelta(event.data.delta)
        return None
    if isinstance(event, RunItemStreamEvent):
        if isinstance(event.item, ToolCallItem) and (call := _call_of(event.item)) is not None:
            return ToolCallStarted(call)
        if isinstance(event.item, ToolCallOutputItem):
            return ToolCallFinished(_result_of(event.item))
    return None


def _call_of(item: ToolCallItem) -> ToolCallPart | None:
    raw = item.raw_item
    name, call_id = getattr(raw, "name", None), getattr(raw, "call_id", None)
    if name is None or call_id is None:
        return None  # a hosted tool (web search, ...) with no function call to show
    return ToolCallPart(id=call_id, name=name, arguments=getattr(raw, "arguments", "") or "{}")


def _result_of(item: ToolCallOutputItem) -> ToolResultPart:
    raw = item.raw_item
    call_id = raw.get("call_id", "") if isinstance(raw, dict) else getattr(raw, "call_id", "")
    return ToolResultPart(call_id=str(call_id), name="", content=str(item.output))


def to_input_items(messages: Sequence[Message]) -> list[Any]:
    """Our conversation as the SDK's (Responses-style) input items."""
    items: list[Any] = []
    for message in messages:
        if message.role == "tool":
            items += [
                {"type": "function_call_output", "call_id": p.call_id, "output": p.content}
                for p in message.parts
                if isinstance(p, ToolResultPart)
            ]
            continue
        if message.text:
            items.append({"role": message.role, "content": message.text})
        items += [
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
            for c in message.tool_calls
        ]
    return items


def from_run_items(items: Sequence[Any]) -> list[Message]:
    """The items of a run as our messages (items we have no equivalent for are left out)."""
    converted: list[Message] = []
    names: dict[str, str] = {}
    for item in items:
        if isinstance(item, MessageOutputItem):
            converted.append(Message.assistant(ItemHelpers.text_message_output(item)))
        elif isinstance(item, ToolCallItem) and (call := _call_of(item)) is not None:
            names[call.id] = call.name
            converted.append(Message(role="assistant", parts=[call]))
        elif isinstance(item, ToolCallOutputItem):
            result = _result_of(item)
            result = result.model_copy(update={"name": names.get(result.call_id, "")})
            converted.append(Message(role="tool", parts=[result]))
    return converted


def register(registry: TypeRegistry) -> None:
    def wrap(obj: sdk.Agent, name: str, description: str) -> OpenAIAgentsAgent:
        return OpenAIAgentsAgent(name, obj, description=description)

    registry.register_type(sdk.Agent, wrap)
