"""``POST /chat/completions``: stateless; the client sends the whole transcript."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence

import orjson
from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.body_limits import off_loop
from agenthost.adapters.disconnect import unless_disconnected
from agenthost.adapters.openai.convert_chat import (
    ChunkFactory,
    check_supported,
    to_completion,
    to_run,
    tool_call_delta,
    tool_call_deltas,
)
from agenthost.adapters.openai.errors import from_exception
from agenthost.adapters.openai.http import (
    find_agent,
    json_response,
    read_body,
    sse_event,
    sse_response,
)
from agenthost.adapters.openai.passthrough import chat_fields, upstream_params, with_upstream
from agenthost.adapters.openai.schemas import ChatCompletionRequest
from agenthost.adapters.runs import RunConsumer
from agenthost.agents import Agent, RunResult, ToolCallDelta

DONE = b"data: [DONE]\n\n"


async def create_chat_completion(request: Request, agents: Mapping[str, Agent]) -> Response:
    body = await read_body(request, ChatCompletionRequest)
    agent = find_agent(agents, body.model)
    check_supported(body, agent)
    # Converting thousands of messages takes a while (~45 µs each): a large body's off the loop.
    messages, options = await off_loop(len(await request.body()), to_run, body)
    options = with_upstream(options, upstream_params(agent, chat_fields(body)))
    id, created = f"chatcmpl-{os.urandom(16).hex()}", int(time.time())
    if not body.stream:
        result = await unless_disconnected(request.receive, agent.run(messages, options=options))
        return json_response(to_completion(result, id=id, created=created, model=agent.name))

    include_usage = bool(body.stream_options and body.stream_options.include_usage)
    chunks = ChunkFactory(id=id, created=created, model=agent.name, include_usage=include_usage)
    # The stream starts at once (a slow first token is kept alive); a run that
    # fails before its first token reports it in the stream (on_error).
    updates = agent.run_stream(messages, options=options)
    return sse_response(_ChatChunks(agent.name, chunks).events(updates))


class _ChatChunks(RunConsumer[bytes]):
    """A run as ``chat.completion.chunk`` events."""

    def __init__(self, agent: str, chunks: ChunkFactory) -> None:
        super().__init__(agent)
        self.chunks = chunks
        self.calls: dict[str, str] = {}  # the arguments streamed so far, by call id
        # Each text chunk's event is the same bytes around the text: split once, here.
        event = sse_event(chunks.chunk({"content": ""}))
        head, _, self._text_tail = event.rpartition(b'"content":""')
        self._text_head = head + b'"content":'

    async def on_start(self) -> Sequence[bytes]:
        return (sse_event(self.chunks.chunk({"role": "assistant", "content": ""})),)

    def text_events(self, text: str) -> Sequence[bytes]:
        # == sse_event(self.chunks.chunk({"content": text}))
        return (self._text_head + orjson.dumps(text) + self._text_tail,)

    async def on_reasoning(self, text: str) -> Sequence[bytes]:
        # The de-facto field of vLLM, DeepSeek and llama.cpp for a delta's reasoning.
        return (sse_event(self.chunks.chunk({"reasoning_content": text})),)

    async def on_tool_call_delta(self, delta: ToolCallDelta) -> Sequence[bytes]:
        sent = self.calls.get(delta.id)
        if sent is not None and not delta.arguments:
            return ()
        self.calls[delta.id] = (sent or "") + delta.arguments
        return (sse_event(self.chunks.chunk(tool_call_delta(delta, first=sent is None))),)

    async def on_finished(self, result: RunResult) -> Sequence[bytes]:
        chunks = self.chunks
        deltas = tool_call_deltas(result.pending, self.calls)
        events = [sse_event(chunks.chunk(delta)) for delta in deltas]
        events.append(sse_event(chunks.chunk({}, result.finish_reason)))
        if (usage := chunks.usage(result.usage)) is not None:
            events.append(sse_event(usage))
        events.append(DONE)
        return events

    async def on_error(self, exc: Exception) -> Sequence[bytes]:
        # The status line is gone: report in the stream as OpenAI does (the
        # openai SDKs raise APIError on a chunk holding "error"), end it cleanly.
        return (sse_event(from_exception(exc).body()), DONE)
