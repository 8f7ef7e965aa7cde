"""``model: mcp:sampling``: the agent's model is the calling client's own model.

The runtime knows no protocol: it defines what it needs, a
:class:`ClientSampler` (one completion of a transcript), and reads the one
serving the current run from :data:`current_sampler`. An adapter whose
client can complete text for the server (MCP's ``sampling/createMessage``)
sets it around the run; instructions, memory and workflows still run here,
while the client's LLM does the reasoning and no key is needed on the
server. Text only for now: the agent's tools are not offered to the
client's model (sampling with tools is not built). Without a sampler
(another protocol, a client that did not declare sampling) the run fails
with a clear error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextvars import ContextVar
from typing import Protocol

from agenthost.agents.errors import UserError
from agenthost.agents.messages import Message
from agenthost.agents.models.base import BaseChatModel, ModelRequest, ModelStreamEvent
from agenthost.agents.models.echo import stream_words


class ClientSampler(Protocol):
    """The calling client's model: one answer to ``messages`` (system text apart)."""

    async def sample(
        self, messages: Sequence[Message], system: str | None, max_tokens: int
    ) -> Message: ...


current_sampler: ContextVar[ClientSampler | None] = ContextVar("current_sampler", default=None)
"""The sampler of the client the current run serves (set by the adapter)."""

DEFAULT_MAX_TOKENS = 1024


class SamplingUnavailable(UserError):
    """The run's client cannot lend its model."""


class SamplingModel(BaseChatModel):
    """Asks the calling client's model for every turn; text only."""

    name = "mcp:sampling"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        sampler = current_sampler.get()
        if sampler is None:
            raise SamplingUnavailable(
                "this agent's model is the client's own (mcp:sampling): call it over MCP "
                "from a client that declares the sampling capability"
            )
        system = "\n\n".join(m.text for m in request.messages if m.role == "system") or None
        transcript = [m for m in request.messages if m.role != "system"]
        max_tokens = request.settings.max_tokens or DEFAULT_MAX_TOKENS
        answer = await sampler.sample(transcript, system, max_tokens)
        async for event in stream_words(request, answer):
            yield event
