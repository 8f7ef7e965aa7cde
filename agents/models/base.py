"""The chat model protocol every provider implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agenthost.agents.errors import UserError
from agenthost.agents.messages import FilePart, Message
from agenthost.agents.options import ModelSettings
from agenthost.agents.results import FinishReason, ReasoningDelta, TextDelta, ToolCallDelta, Usage
from agenthost.agents.tools.base import ToolDefinition

if TYPE_CHECKING:
    from agenthost.agents.observe import UpstreamObserver


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request to a chat model: the transcript, tools it may call, settings, and
    what watches it.

    The observer travels with the request (as httpx's ``trace`` extension does) rather
    than living on the model: it is the asking agent's (metrics label the agent), a
    model may serve several agents, and nothing has to be set on a built model.
    """

    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    settings: ModelSettings = field(default_factory=ModelSettings)
    observer: UpstreamObserver | None = field(default=None, compare=False)
    """Told of each upstream request (retries included) and of the call (metrics,
    ``chat`` spans); None: not watched."""


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A complete model answer: an assistant message (text and/or tool calls)."""

    message: Message
    usage: Usage
    finish_reason: FinishReason = "stop"
    reasoning: str = ""
    """The model's reasoning before this answer, when its upstream sends it apart
    (``reasoning_content``); not part of ``message``, so never stored."""


ModelStreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | ModelResponse


@runtime_checkable
class ChatModel(Protocol):
    """A chat model. ``stream`` yields text deltas (and, if it can, pieces of its tool
    calls' arguments) and ends with the full response."""

    name: str
    supports_response_format: bool

    async def request(self, request: ModelRequest) -> ModelResponse: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]: ...

    def lifespan(self) -> AbstractAsyncContextManager[Any]: ...


class BaseChatModel:
    """Shared defaults: ``request`` drains ``stream``; no start-up work."""

    name: str = "model"
    supports_response_format: bool = False
    # Sends ``ModelSettings.upstream_params`` to an OpenAI-compatible upstream.
    relays_upstream_params: bool = False

    async def request(self, request: ModelRequest) -> ModelResponse:
        async for event in self.stream(request):
            if isinstance(event, ModelResponse):
                return event
        raise RuntimeError(f"{self.name}: stream ended without a response")

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        raise NotImplementedError

    def lifespan(self) -> AbstractAsyncContextManager[Any]:
        return nullcontext()


def count_words(messages: Sequence[Message]) -> int:
    """A rough token count (whitespace-separated words) for models with no tokenizer."""
    return sum(len(m.text.split()) for m in messages)


def refuse_files(request: ModelRequest, model: str) -> None:
    """For a text-only model: a file part (image, audio, document) is refused, not dropped."""
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, FilePart):
                kind = (part.mime_type or "file").split("/")[0]
                raise UserError(
                    f"model {model!r} takes text only; it cannot read this {kind} part",
                    param="messages",
                )


def refuse_forced_tools(request: ModelRequest, model: str) -> None:
    """For a model that never calls tools: ``required`` or a named tool cannot be honoured."""
    choice = request.settings.tool_choice
    if choice not in (None, "auto", "none"):
        raise UserError(
            f"model {model!r} cannot be made to call a tool (tool_choice {choice!r})",
            param="tool_choice",
        )
