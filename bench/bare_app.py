"""The floor: a bare FastAPI ``POST /v1/chat/completions`` with pre-built replies.

It answers the benchmark's prompt with bytes of the same size and shape as
agenthost's ``echo`` agent: one JSON completion, or (for ``"stream": true``)
the same SSE events through a plain ``StreamingResponse`` (a role chunk, one
chunk per word, a finish chunk, ``data: [DONE]``). It reads the body and looks
up ``stream`` with orjson, and does nothing else: no validation, no agent.

Run it as ``uvicorn bench.bare_app:app`` from the repository root; set
``BARE_APP_PROMPT`` to the prompt the load generator sends (the default is the
benchmark's own prompt).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson
from fastapi import FastAPI, Request
from starlette.responses import Response, StreamingResponse

DEFAULT_PROMPT = (
    "Summarise the main points of the quarterly report in three short bullet points for the team."
)
MODEL = "echo"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
DONE = b"data: [DONE]\n\n"
# The echo model streams "one word and the whitespace after it" per chunk.
WORD_CHUNKS = re.compile(r"\s*\S+\s*")

_ID = "chatcmpl-" + "0" * 32  # same length as agenthost's uuid4().hex ids
_CREATED = int(time.time())


def _usage(prompt: str) -> dict[str, int]:
    words = len(prompt.split())
    return {"prompt_tokens": words, "completion_tokens": words, "total_tokens": 2 * words}


def completion_body(prompt: str) -> bytes:
    """The non-streamed reply: an OpenAI ``chat.completion`` echoing ``prompt``."""
    message = {"role": "assistant", "content": prompt, "refusal": None}
    completion = {
        "id": _ID,
        "object": "chat.completion",
        "created": _CREATED,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": _usage(prompt),
        "system_fingerprint": None,
    }
    return orjson.dumps(completion)


def _chunk_event(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
    chunk = {
        "id": _ID,
        "object": "chat.completion.chunk",
        "created": _CREATED,
        "model": MODEL,
        "choices": [choice],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def stream_events(prompt: str) -> tuple[bytes, ...]:
    """The streamed reply to ``prompt``, one item per SSE event."""
    role = _chunk_event({"role": "assistant", "content": ""})
    words = [_chunk_event({"content": word}) for word in WORD_CHUNKS.findall(prompt)]
    return (role, *words, _chunk_event({}, "stop"), DONE)


PROMPT = os.environ.get("BARE_APP_PROMPT", DEFAULT_PROMPT)
COMPLETION = completion_body(PROMPT)
EVENTS = stream_events(PROMPT)

app = FastAPI(title="bare")


async def _replay(events: Sequence[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event


@app.post("/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    """Read the body, then send the pre-built reply (streamed when asked)."""
    body = orjson.loads(await request.body())
    if body.get("stream"):
        return StreamingResponse(
            _replay(EVENTS), media_type="text/event-stream", headers=SSE_HEADERS
        )
    return Response(COMPLETION, media_type="application/json")
