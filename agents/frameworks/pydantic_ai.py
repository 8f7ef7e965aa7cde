"""pydantic-ai's ``Agent``, run and streamed through its own API.

The conversation is converted to pydantic-ai's messages for
``message_history``, and the messages of its run back to ours, so sessions
keep the whole exchange (tool calls included) whichever protocol asked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from functools import partial
from typing import Any

try:
    import pydantic_ai
    from pydantic_ai import messages as pai
    from pydantic_ai.usage import RunUsage
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "serving pydantic-ai agents needs the 'pydantic-ai' extra: "
        "pip install 'agenthost[pydantic-ai]'"
    ) from exc

from agenthost.agents.agent import BaseAgent
from agenthost.agents.errors import UserError
from agenthost.agents.frameworks import TypeRegistry
from agenthost.agents.frameworks.streams import Emit, Finished, stream_in_task
from agenthost.agents.messages import Message, Part, TextPart, ToolCallPart, ToolResultPart
from agenthost.agents.options import RunOptions
from agenthost.agents.results import RunFinished, RunResult, RunUpdate, TextDelta, Usage


class PydanticAIAgent(BaseAgent):
    """A pydantic-ai agent behind the uniform agent interface."""

    def __init__(
        self, name: str, agent: pydantic_ai.Agent[Any, Any], *, description: str = ""
    ) -> None:
        super().__init__(name, description)
        self.agent = agent

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        if not input or input[-1].role != "user":
            raise UserError("a pydantic-ai agent needs a user message last", param="messages")
        prompt = input[-1].text
        earlier = to_pydantic_ai([*history, *input[:-1]])
        kwargs: dict[str, Any] = {"message_history": earlier}
        if options.instructions:
            kwargs["instructions"] = options.instructions
        if stream:
            updates = stream_in_task(partial(self._stream, prompt, kwargs))
            async for item in updates:
                if isinstance(item, Finished):
                    output, produced, usage = item.value
                else:
                    yield TextDelta(item)
        else:
            result = await self.agent.run(prompt, **kwargs)
            output, produced, usage = str(result.output), result.new_messages(), result.usage
        replies = from_pydantic_ai(produced)
        if replies and replies[0].role == "user":  # the prompt: keep our own message object
            replies = replies[1:]
        new = [*input, *replies]
        yield RunFinished(RunResult(output, new, _usage(usage)))

    async def _stream(
        self, prompt: str, kwargs: dict[str, Any], emit: Emit
    ) -> tuple[str, list[pai.ModelMessage], RunUsage]:
        async with self.agent.run_stream(prompt, **kwargs) as streamed:
            async for delta in streamed.stream_text(delta=True):
                if delta:
                    emit(delta)
            output = str(await streamed.get_output())
            return output, streamed.new_messages(), streamed.usage


def register(registry: TypeRegistry) -> None:
    def wrap(obj: pydantic_ai.Agent[Any, Any], name: str, description: str) -> PydanticAIAgent:
        return PydanticAIAgent(name, obj, description=description)

    registry.register_type(pydantic_ai.Agent, wrap)


def to_pydantic_ai(messages: Sequence[Message]) -> list[pai.ModelMessage]:
    """Our conversation as pydantic-ai's message history."""
    converted: list[pai.ModelMessage] = []
    for message in messages:
        if message.role == "assistant":
            parts: list[pai.ModelResponsePart] = []
            if message.text:
                parts.append(pai.TextPart(content=message.text))
            parts += [
                pai.ToolCallPart(tool_name=c.name, args=c.arguments, tool_call_id=c.id)
                for c in message.tool_calls
            ]
            converted.append(pai.ModelResponse(parts=parts))
        elif message.role == "tool":
            returns: list[pai.ModelRequestPart] = [
                pai.ToolReturnPart(tool_name=p.name, content=p.content, tool_call_id=p.call_id)
                for p in message.parts
                if isinstance(p, ToolResultPart)
            ]
            converted.append(pai.ModelRequest(parts=returns))
        elif message.role == "system":
            converted.append(pai.ModelRequest(parts=[pai.SystemPromptPart(content=message.text)]))
        else:
            converted.append(pai.ModelRequest(parts=[pai.UserPromptPart(content=message.text)]))
    return converted


def from_pydantic_ai(messages: Sequence[pai.ModelMessage]) -> list[Message]:
    """pydantic-ai's messages as ours (parts we have no equivalent for are left out)."""
    converted: list[Message] = []
    for message in messages:
        if isinstance(message, pai.ModelResponse):
            parts: list[Part] = []
            for part in message.parts:
                if isinstance(part, pai.TextPart) and part.content:
                    parts.append(TextPart(text=part.content))
                elif isinstance(part, pai.ToolCallPart):
                    arguments = part.args_as_json_str()
                    parts.append(
                        ToolCallPart(id=part.tool_call_id, name=part.tool_name, arguments=arguments)
                    )
            if parts:
                converted.append(Message(role="assistant", parts=parts))
            continue
        for request_part in message.parts:
            if isinstance(request_part, pai.UserPromptPart):
                text = request_part.content
                converted.append(Message.user(text if isinstance(text, str) else str(text)))
            elif isinstance(request_part, pai.ToolReturnPart):
                result = ToolResultPart(
                    call_id=request_part.tool_call_id,
                    name=request_part.tool_name,
                    content=request_part.model_response_str(),
                )
                converted.append(Message(role="tool", parts=[result]))
    return converted


def _usage(usage: RunUsage) -> Usage:
    return Usage(usage.input_tokens, usage.output_tokens, usage.requests)
