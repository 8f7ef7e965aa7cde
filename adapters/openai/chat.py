"""``POST /chat/completions``: stateless; the client sends the whole transcript."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping

from starlette.requests import Request
from starlette.responses import Response

from agenthost.adapters.disconnect import unless_disconnected
from agenthost.adapters.openai.convert_chat import (
    ChunkFactory,
    check_supported,
    to_completion,
    to_run,
    tool_call_deltas,
)
from agenthost.adapters.openai.errors import from_exception
from agenthost.adapters.openai.http import (
    find_agent,
    json_response,
    read_body,
    sse_event,
    sse_response,
    started,
)
from agenthost.adapters.openai.schemas import ChatCompletionRequest
from agenthost.agents import Agent, RunFinished, RunUpdate, TextDelta

DONE = b"data: [DONE]\n\n"


async def create_chat_completion(request: Request, agents: Mapping[str, Agent]) -> Response:
    body = await read_body(request, ChatCompletionRequest)
    agent = find_agent(agents, body.model)
    check_supported(body, agent)
    messages, options = to_run(body)
    id, created = f"chatcmpl-{os.urandom(16).hex()}", int(time.time())
    if not body.stream:
        result = await unless_disconnected(request.receive, agent.run(messages, options=options))
        return json_response(to_completion(result, id=id, created=created, model=agent.name))

    include_usage = bool(body.stream_options and body.stream_options.include_usage)
    chunks = ChunkFactory(id=id, created=created, model=agent.name, include_usage=include_usage)
    updates = await started(agent.run_stream(messages, options=options))
    return sse_response(_stream(updates, chunks))


async def _stream(
    updates: AsyncGenerator[RunUpdate, None], chunks: ChunkFactory
) -> AsyncIterator[bytes]:
    try:
        yield sse_event(chunks.chunk({"role": "assistant", "content": ""}))
        async for update in updates:
            if isinstance(update, TextDelta):
                yield sse_event(chunks.chunk({"content": update.text}))
            elif isinstance(update, RunFinished):
                result = update.result
                for delta in tool_call_deltas(result.pending):
                    yield sse_event(chunks.chunk(delta))
                yield sse_event(chunks.chunk({}, result.finish_reason))
                if (usage := chunks.usage(result.usage)) is not None:
                    yield sse_event(usage)
                yield DONE
    except Exception as exc:
        # The status line is gone: report in the stream and end it cleanly.
        yield sse_event(from_exception(exc).body())
        yield DONE
    finally:
        await updates.aclose()
