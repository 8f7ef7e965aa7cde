"""``openai``: any OpenAI-compatible upstream through the official ``openai`` SDK.

Works with OpenAI, Azure OpenAI (base URL of the deployment), Ollama, vLLM,
llama.cpp server, LM Studio, Groq and anything else that speaks Chat
Completions. Base URL, key, model name, timeout and retries are per agent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

try:
    import openai
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the openai provider needs the 'openai' extra: pip install 'agenthost[openai]'"
    ) from exc

from agents.errors import ModelError
from agents.models.base import BaseChatModel, ModelRequest, ModelResponse, ModelStreamEvent
from agents.models.openai_format import (
    ChatStreamAccumulator,
    from_chat_message,
    from_chat_usage,
    from_finish_reason,
    to_chat_messages,
    to_chat_settings,
    to_chat_tools,
)
from agents.results import TextDelta


class OpenAIModel(BaseChatModel):
    """A chat model served by an OpenAI-compatible HTTP API."""

    supports_response_format = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self.name = model
        # Local servers (Ollama, vLLM...) need no key, but the SDK refuses to
        # build a client without one.
        self._client = client or openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=max_retries,
        )

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections to the upstream."""
        await self._client.close()

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.name,
            "messages": to_chat_messages(request.messages),
            **to_chat_settings(request.settings),
        }
        if request.tools:
            params["tools"] = to_chat_tools(request.tools)
        return params

    async def request(self, request: ModelRequest) -> ModelResponse:
        try:
            completion = await self._client.chat.completions.create(**self._params(request))
        except openai.OpenAIError as exc:
            raise ModelError(f"upstream model {self.name!r} failed: {exc}") from exc
        if not completion.choices:
            raise ModelError(f"upstream model {self.name!r} returned no choices")
        choice = completion.choices[0]
        usage = from_chat_usage(completion.usage.model_dump() if completion.usage else None)
        return ModelResponse(
            from_chat_message(choice.message.model_dump()),
            usage,
            from_finish_reason(choice.finish_reason),
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        accumulator = ChatStreamAccumulator()
        try:
            stream = await self._client.chat.completions.create(
                **self._params(request), stream=True, stream_options={"include_usage": True}
            )
            async with stream:
                async for chunk in stream:
                    if text := accumulator.add(chunk.model_dump()):
                        yield TextDelta(text)
        except openai.OpenAIError as exc:
            raise ModelError(f"upstream model {self.name!r} failed: {exc}") from exc
        yield accumulator.response()
