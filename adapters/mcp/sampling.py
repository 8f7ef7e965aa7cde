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

import base64
from collections.abc import Sequence
from typing import Any

import mcp_types as types
import orjson
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agenthost.adapters.mcp.backchannel import Channel, channel_of, client_declares
from agenthost.agents import Message, ToolCallPart, ToolResultPart
from agenthost.agents.models.sampling import ClientSampler

SAMPLING_STATE = "sampling:"
"""The ``requestState`` prefix of a 2026-07-28 round that asked the client's model."""


class SampleNeeded(Exception):
    """A 2026-07-28 run needs the client's model: the round's input request."""

    def __init__(self, request: types.CreateMessageRequest, answers: Sequence[str]) -> None:
        super().__init__("the client's model must answer first")
        self.request = request
        self.answers = list(answers)

    def result(self) -> types.InputRequiredResult:
        """The input request, keyed by the sample's place in the run; the
        ``requestState`` carries the answers so far (the client's own)."""
        state = SAMPLING_STATE + base64.urlsafe_b64encode(orjson.dumps(self.answers)).decode()
        return types.InputRequiredResult(
            input_requests={f"sample-{len(self.answers)}": self.request}, request_state=state
        )


def answers_of_state(params: types.CallToolRequestParams) -> list[str] | None:
    """The client's model answers a retried call carries (those of earlier rounds,
    in its ``requestState``, and this round's input response); None when its
    ``requestState`` is not a sampling round's. A tampered one is -32602."""
    state = params.request_state or ""
    if not state.startswith(SAMPLING_STATE):
        return None
    try:
        answers = orjson.loads(base64.urlsafe_b64decode(state.removeprefix(SAMPLING_STATE)))
    except (ValueError, orjson.JSONDecodeError):
        answers = None
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise MCPError(types.INVALID_PARAMS, "requestState is not one this server issued")
    response = (params.input_responses or {}).get(f"sample-{len(answers)}")
    if isinstance(response, types.CreateMessageResult | types.CreateMessageResultWithTools):
        content = response.content
        pieces = content if isinstance(content, list) else [content]
        answers.append("".join(p.text for p in pieces if isinstance(p, types.TextContent)))
    return answers


def sampler_for(
    ctx: ServerRequestContext[Any, Any], answers: Sequence[str] = ()
) -> ClientSampler | None:
    """The client's model, if this call can ask it; else None.

    2026-07-28 has no server requests: a sample is an input request of an
    ``input_required`` round, and the retried call replays the run with the
    answers so far (the sampling model calls no tools; steps of a workflow
    before a sample run again). A client that did not declare sampling gets
    -32021 (the missing capability) from such a run.
    """
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return _Recorded(answers) if client_declares(ctx, "sampling") else _Missing()
    channel = channel_of(ctx)
    if channel is None or not client_declares(ctx, "sampling"):
        return None
    return _Sampler(channel)


class _Recorded:
    """2026-07-28: the answers of earlier rounds in turn, then an input request."""

    def __init__(self, answers: Sequence[str]) -> None:
        self.answers = list(answers)
        self.used = 0

    async def sample(
        self, messages: Sequence[Message], system: str | None, max_tokens: int
    ) -> Message:
        if self.used < len(self.answers):
            self.used += 1
            return Message.assistant(self.answers[self.used - 1])
        raise SampleNeeded(_request(messages, system, max_tokens), self.answers)


class _Missing:
    async def sample(
        self, messages: Sequence[Message], system: str | None, max_tokens: int
    ) -> Message:
        raise MCPError(
            types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            "this agent's model is the client's own (mcp:sampling): "
            "declare the sampling capability",
            {"requiredCapabilities": {"sampling": {}}},
        )


def _request(
    messages: Sequence[Message], system: str | None, max_tokens: int
) -> types.CreateMessageRequest:
    params = types.CreateMessageRequestParams(
        messages=[to_sampling(m) for m in messages], system_prompt=system, max_tokens=max_tokens
    )
    return types.CreateMessageRequest(params=params)


class _Sampler:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    async def sample(
        self, messages: Sequence[Message], system: str | None, max_tokens: int
    ) -> Message:
        result = await self.channel.request(
            _request(messages, system, max_tokens), types.CreateMessageResult
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
