"""The calling client's model for ``model: mcp:sampling`` agents: ``sampling/createMessage``.

Lent to the runtime (:mod:`agents.models.sampling`) for one call when the
client declared ``sampling`` and the call has a back channel (a
handshake-era client: a session, stdio, or in stateless mode the call's own
stream, :mod:`adapters.mcp.backchannel`). Text turns only
(the transcript's tool calls and results, from earlier turns, as text).
Sent as a plain request: the SDK marks ``create_message`` deprecated
(2026-07-28 dropped sampling as a server request) for every era.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext

from agenthost.adapters.mcp.backchannel import Channel, channel_of, client_declares
from agenthost.agents import Message, ToolCallPart, ToolResultPart
from agenthost.agents.models.sampling import ClientSampler


def sampler_for(ctx: ServerRequestContext[Any, Any]) -> ClientSampler | None:
    """The client's model, if this call can ask it; else None."""
    channel = channel_of(ctx)
    if channel is None or not client_declares(ctx, "sampling"):
        return None
    return _Sampler(channel)


class _Sampler:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    async def sample(
        self, messages: Sequence[Message], system: str | None, max_tokens: int
    ) -> Message:
        params = types.CreateMessageRequestParams(
            messages=[to_sampling(m) for m in messages],
            system_prompt=system,
            max_tokens=max_tokens,
        )
        result = await self.channel.request(
            types.CreateMessageRequest(params=params), types.CreateMessageResult
        )
        content = result.content
        text = content.text if isinstance(content, types.TextContent) else ""
        return Message.assistant(text)


def to_sampling(message: Message) -> types.SamplingMessage:
    """A transcript message as text: the client's model sees tool calls and results too."""
    pieces = [message.text] if message.text else []
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            pieces.append(f"[called {part.name}({part.arguments})]")
        elif isinstance(part, ToolResultPart):
            pieces.append(f"[{part.name} returned: {part.content}]")
    role = "assistant" if message.role == "assistant" else "user"
    text = types.TextContent(type="text", text="\n".join(pieces))
    return types.SamplingMessage(role=role, content=text)
