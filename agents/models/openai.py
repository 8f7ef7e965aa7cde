"""``openai``: any OpenAI-compatible upstream, with the official ``openai`` SDK's errors.

Works with OpenAI, Azure OpenAI (base URL of the deployment), Ollama, vLLM,
llama.cpp server, LM Studio, Groq and anything else that speaks Chat
Completions. Base URL, key, model name, timeout and retries are per agent.
The SDK client gives the base URL, key, headers and error types; requests go
through :class:`~agenthost.agents.models.openai_http.ChatClient` (aiohttp and
orjson), which costs a fraction of the SDK's own request path.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

try:
    import openai
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the openai provider needs the 'openai' extra: pip install 'agenthost[openai]'"
    ) from exc

from agenthost.agents.errors import ModelError, UserError
from agenthost.agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
)
from agenthost.agents.models.idle import IdleDeadline
from agenthost.agents.models.openai_errors import (
    MALFORMED,
    failed,
    malformed,
    malformed_answers,
    retry_delay,
)
from agenthost.agents.models.openai_format import (
    ChatStreamAccumulator,
    from_chat_message,
    from_chat_reasoning,
    from_chat_usage,
    from_finish_reason,
    to_chat_messages,
    to_chat_settings,
    to_chat_tool_choice,
    to_chat_tools,
)
from agenthost.agents.models.openai_http import ChatClient
from agenthost.agents.models.openai_keys import missing_key
from agenthost.agents.observe import ModelCallProbe, UpstreamObserver
from agenthost.agents.results import ReasoningDelta, TextDelta

T = TypeVar("T")
logger = logging.getLogger("agenthost.upstream")


class OpenAIModel(BaseChatModel):
    """A chat model served by an OpenAI-compatible HTTP API.

    ``timeout`` bounds each upstream request and, in a stream, the time
    between two events (keep-alive comments do not count). ``max_retries``
    is the number of retries of a failed request, ours rather than the
    SDK's, so that a wait longer than what remains of ``timeout`` is passed
    to the client instead of slept on.

    Without a key, OpenAI's own API (the default base URL) and the hosted APIs
    of :mod:`~agenthost.agents.models.openai_keys` are refused with a
    :class:`~agenthost.agents.errors.UserError` naming the variable to set; any
    other base URL (Ollama, vLLM, a server of one's own) may need none.
    """

    supports_response_format = True
    relays_upstream_params = True

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
        self.timeout = timeout
        self.max_retries = max_retries
        if api_key is None and base_url is None:
            # Neither given: the SDK's convention, OPENAI_API_KEY and
            # OPENAI_BASE_URL. A key from the environment never goes to a
            # base URL named in config: it may be another provider's server.
            api_key = os.environ.get("OPENAI_API_KEY")
        if client is None:
            # Local servers (Ollama, vLLM...) need no key, but the SDK refuses to
            # build a client without one. It sends nothing itself: ChatClient does.
            client = openai.AsyncOpenAI(
                base_url=base_url, api_key=api_key or "unused", timeout=timeout
            )
            # Every request would go out without a key and come back 401: refused at
            # start-up (and by ``agenthost check``) instead, saying what to set.
            host = client.base_url.host
            if not api_key and (refused := missing_key(model, host, base_url_set=bool(base_url))):
                raise refused
        self._client = client.with_options(max_retries=0)
        self._http = ChatClient(self._client, timeout)

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections to the upstream."""
        await self._http.aclose()

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.name,
            "messages": to_chat_messages(request.messages),
            **to_chat_settings(request.settings),
        }
        if request.tools:
            params["tools"] = to_chat_tools(request.tools)
            choice = request.settings.tool_choice
            if choice is not None:
                params["tool_choice"] = to_chat_tool_choice(choice)
            if request.settings.parallel_tool_calls is not None:
                params["parallel_tool_calls"] = request.settings.parallel_tool_calls
        elif request.settings.tool_choice not in (None, "auto", "none"):
            raise UserError(
                f"tool_choice {request.settings.tool_choice!r} needs tools, and none are offered",
                param="tool_choice",
            )
        return params

    async def _with_retries(
        self, call: Callable[[], Awaitable[T]], observer: UpstreamObserver | None
    ) -> T:
        """``call()``, retried; ``observer`` is told of each attempt."""
        deadline = time.monotonic() + self.timeout
        for attempt in itertools.count():
            try:
                answer = await call()
            except openai.OpenAIError as exc:
                if observer is not None:
                    limited = getattr(exc, "status_code", None) == 429
                    observer.upstream_request("rate_limited" if limited else "error")
                remaining = deadline - time.monotonic()
                delay = retry_delay(exc, attempt, self.max_retries, remaining)
                if delay is None:
                    retried = attempt > 0 and attempt >= self.max_retries
                    raise failed(self.name, exc, retried=retried) from exc
                await asyncio.sleep(delay)
                continue
            if observer is not None:
                observer.upstream_request("ok")
            return answer
        raise AssertionError("unreachable")  # pragma: no cover

    def _call(
        self, params: dict[str, Any], observer: UpstreamObserver | None
    ) -> tuple[ModelCallProbe | None, dict[str, str] | None]:
        """The observer's probe of a call, and the request headers it asks for."""
        call = observer.model_call(self.name, params) if observer is not None else None
        return call, call.headers if call is not None and call.headers else None

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = self._params(request)
        observer = request.observer
        call, headers = self._call(params, observer)
        try:
            with malformed_answers(self.name):
                answer = await self._with_retries(
                    lambda: self._http.complete(params, headers), observer
                )
                completion = _object(answer)
                choice = completion["choices"][0]
                response = ModelResponse(
                    from_chat_message(choice["message"]),
                    from_chat_usage(completion.get("usage")),
                    from_finish_reason(choice.get("finish_reason")),
                    from_chat_reasoning(choice["message"]),
                )
        except BaseException as exc:
            if call is not None:
                call.finished(None, exc)
            raise
        if call is not None:
            call.finished(response, None)
        return response

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        params = {
            **self._params(request),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        call, headers = self._call(params, request.observer)
        events = self._stream(params, headers, request.observer)
        # Unwatched, the events are the upstream's own: no extra step per chunk.
        return events if call is None else _watched(events, call)

    async def _stream(
        self,
        params: dict[str, Any],
        headers: dict[str, str] | None,
        observer: UpstreamObserver | None,
    ) -> AsyncIterator[ModelStreamEvent]:
        accumulator = ChatStreamAccumulator()
        response = await self._with_retries(lambda: self._http.open(params, headers), observer)
        chunks = self._http.events(response)
        # SSE comments are skipped by ``events``: only a useful event resets the clock.
        deadline = IdleDeadline(self.timeout)
        try:
            while True:
                # What ``malformed_answers`` does, without a context manager per chunk.
                try:
                    deadline.arm()
                    try:
                        chunk = await anext(chunks)
                    except asyncio.CancelledError:
                        if deadline.expired():
                            raise TimeoutError from None
                        raise
                    finally:
                        deadline.disarm()
                    text = accumulator.add(_object(chunk))
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise ModelError(
                        f"upstream model {self.name!r} sent nothing for {self.timeout:g} s"
                    ) from None
                except openai.OpenAIError as exc:
                    raise failed(self.name, exc, retried=False) from exc
                except (ModelError, UserError):
                    raise
                except MALFORMED as exc:
                    raise malformed(self.name, exc) from exc
                except Exception as exc:
                    # The transport's own errors (a connection cut mid-body...).
                    logger.warning("upstream stream of %r broke", self.name, exc_info=True)
                    raise ModelError(
                        f"upstream model {self.name!r} failed: the upstream's stream broke "
                        f"({type(exc).__name__})"
                    ) from exc
                if accumulator.reasoning_delta:
                    yield ReasoningDelta(accumulator.take_reasoning())
                if text:
                    yield TextDelta(text)
                if accumulator.call_deltas:
                    for delta in accumulator.take_call_deltas():
                        yield delta
        finally:
            deadline.close()
            await chunks.aclose()  # releases the response, also when never started
            response.release()
        yield accumulator.response()


async def _watched(
    events: AsyncIterator[ModelStreamEvent], call: ModelCallProbe
) -> AsyncIterator[ModelStreamEvent]:
    response = None
    try:
        async for event in events:
            if isinstance(event, ModelResponse):
                response = event
            yield event
    except BaseException as exc:
        call.finished(None, None if isinstance(exc, GeneratorExit) else exc)
        raise
    call.finished(response, None)


def _object(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return value
