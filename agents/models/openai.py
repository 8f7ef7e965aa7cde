"""``openai``: any OpenAI-compatible upstream through the official ``openai`` SDK.

Works with OpenAI, Azure OpenAI (base URL of the deployment), Ollama, vLLM,
llama.cpp server, LM Studio, Groq and anything else that speaks Chat
Completions. Base URL, key, model name, timeout and retries are per agent.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

try:
    import openai
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the openai provider needs the 'openai' extra: pip install 'agenthost[openai]'"
    ) from exc

from agents.errors import AgentError, ModelBusy, ModelError, UserError
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
        if api_key is None and base_url is None:
            # Neither given: the SDK's convention, OPENAI_API_KEY and
            # OPENAI_BASE_URL. A key from the environment never goes to a
            # base URL named in config: it may be another provider's server.
            api_key = os.environ.get("OPENAI_API_KEY")
        # Local servers (Ollama, vLLM...) need no key, but the SDK refuses to
        # build a client without one. The SDK's aiohttp transport costs about
        # half the CPU of its default httpx2 one (bench/openai_overhead.py --upstream).
        self._client = client or openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=max_retries,
            http_client=openai.DefaultAioHttpClient(),
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
        with _upstream_errors(self.name):
            # cast_to=object: the SDK hands back the decoded JSON, not typed models.
            completion = _object(
                await self._client.post(
                    "/chat/completions", body=self._params(request), cast_to=object
                )
            )
            choice = completion["choices"][0]
            return ModelResponse(
                from_chat_message(choice["message"]),
                from_chat_usage(completion.get("usage")),
                from_finish_reason(choice.get("finish_reason")),
            )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        accumulator = ChatStreamAccumulator()
        params = {
            **self._params(request),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        with _upstream_errors(self.name):
            stream = await self._client.post(
                "/chat/completions",
                body=params,
                cast_to=object,
                stream=True,
                stream_cls=openai.AsyncStream[object],
            )
            async with stream:
                async for chunk in stream:
                    if text := accumulator.add(_object(chunk)):
                        yield TextDelta(text)
        yield accumulator.response()


def _object(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _failed(model: str, exc: openai.OpenAIError) -> AgentError:
    """What an upstream failure means for the caller.

    A request the upstream refuses as invalid (typically a conversation
    longer than its context) is the caller's to fix: a :class:`UserError`
    with the upstream's param. A rate limit is worth retrying later
    (:class:`ModelBusy`), except an exhausted quota. Anything else (our key,
    the upstream's health, the network) is a :class:`ModelError`.
    """
    if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        return UserError(
            f"upstream model {model!r} refused the request: {exc.message}", param=exc.param
        )
    if isinstance(exc, openai.RateLimitError) and exc.code != "insufficient_quota":
        return ModelBusy(
            f"upstream model {model!r} is rate limited: {_message(exc)}",
            retry_after=_retry_after(exc.response.headers.get("retry-after")),
        )
    # The SDK's own message can hide the reason ("Connection error.", and the
    # aiohttp transport reports a refused connection as "Request timed out."):
    # name the root cause too.
    root: BaseException = exc
    while root.__cause__ is not None:
        root = root.__cause__
    reason = f" ({root})" if root is not exc and str(root) else ""
    return ModelError(f"upstream model {model!r} failed: {exc}{reason}")


def _message(exc: openai.APIStatusError) -> str:
    """The upstream's own error message (the SDK's prefixes it with the whole body)."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return exc.message


def _retry_after(header: str | None) -> float | None:
    try:
        return max(0.0, float(header)) if header else None
    except ValueError:  # an HTTP date: rare from model servers
        return None


@contextmanager
def _upstream_errors(model: str) -> Iterator[None]:
    """SDK failures and answers that are not completions → the runtime's errors."""
    try:
        yield
    except openai.OpenAIError as exc:
        raise _failed(model, exc) from exc
    except (LookupError, TypeError, AttributeError) as exc:
        raise ModelError(
            f"upstream model {model!r} sent a malformed response ({type(exc).__name__}: {exc})"
        ) from exc
