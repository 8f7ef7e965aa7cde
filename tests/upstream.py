"""A real HTTP fake of an OpenAI-compatible upstream model server.

It speaks Chat Completions (streamed and not) over a real socket and
answers by rule, so the ``openai`` provider is tested through the real SDK:

- the last message is a tool result → "The result is <content>."
- tools were offered and the last user text says "calculate X" → a call
  to ``calculator`` with ``{"expression": "X"}``;
- tools were offered and the last user text says "use NAME with JSON" (or
  ``tool_choice`` names NAME) → a call to NAME with those arguments (``{}``);
  "use A and B" → two calls at once; ``tool_choice: "none"`` → no call;
  "TEXT; use ..." → TEXT, then the calls;
- the model name is "broken" → 500;
- the model name is "too-long" → 400 ``context_length_exceeded`` (param
  ``messages``), "busy" → 429 with ``retry-after: 7``, "no-quota" → 429
  ``insufficient_quota``;
- the model name is "malformed" → 200 with bodies that are not completions;
  "not-json" → 200 with a body that is not JSON;
- the model name is "slow" → a stream of 200 words, one every 50 ms; a
  stream that its client leaves before the end is counted in ``abandoned``;
- "keepalive" → a stream of SSE comments only, one every 50 ms, for 10 s;
- "cut" → a stream that breaks off after one word (the connection drops);
- "bad-sse" → a stream whose event is not JSON; "busy-briefly" → 429 with
  ``retry-after: 0``;
- otherwise → "upstream says: <last user text>".

A model named "reasoner" reasons first, as vLLM and DeepSeek send it
(``reasoning_content``: "Thinking about <last user text>." on the message,
word by word in a stream, before the answer) and counts its words in
``usage.completion_tokens_details.reasoning_tokens`` (part of
``completion_tokens``); "reasoner-ollama" sends the same reasoning in
Ollama's and OpenRouter's field, ``reasoning``, and no such count, as Ollama.
Every request is recorded, ``reasoning_effort`` included.

Streamed, text comes word by word and a tool call as OpenAI sends it: id
and name first, then its arguments in pieces of ``ARGUMENT_PIECE`` characters.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.commands import free_port as free_port  # where the tests have taken it from

ARGUMENT_PIECE = 4
"""Characters per streamed piece of a tool call's arguments."""


def _call(name: str, arguments: str, index: int = 1) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {"id": f"call_up_{index}", "type": "function", "function": function}


def _client_calls(body: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """Calls asked for by "use NAME with JSON", "use A and B" or a named tool_choice."""
    choice = body.get("tool_choice")
    if not body.get("tools") or choice == "none":
        return []
    if text.startswith("use "):
        names, _, arguments = text.removeprefix("use ").partition(" with ")
        return [_call(n, arguments or "{}", i) for i, n in enumerate(names.split(" and "), 1)]
    if isinstance(choice, dict):
        return [_call(choice["function"]["name"], "{}")]
    return []


def _text_of(content: Any) -> str:
    """A message's text, its content a string or a list of parts (as LiteLLM sends it)."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"content": f"The result is {_text_of(last['content'])}.", "tool_calls": None}
    text = _text_of(last["content"])
    preface, said, asked = text.partition("; use ")
    if said:
        text = f"use {asked}"
    if calls := _client_calls(body, text):
        return {"content": preface if said else None, "tool_calls": calls}
    if body.get("tools") and text.startswith("calculate "):
        arguments = json.dumps({"expression": text.removeprefix("calculate ")})
        call = {
            "id": "call_up_1",
            "type": "function",
            "function": {"name": "calculator", "arguments": arguments},
        }
        return {"content": None, "tool_calls": [call]}
    return {"content": f"upstream says: {text}", "tool_calls": None}


REASONING_FIELD = {"reasoner": "reasoning_content", "reasoner-ollama": "reasoning"}
"""The models that reason, and the field each sends its reasoning in."""


def _reasoning(body: dict[str, Any]) -> dict[str, str]:
    """The reasoning field of a reasoning model's answer (nothing for other models)."""
    field = REASONING_FIELD.get(body["model"])
    if field is None:
        return {}
    last = body["messages"][-1]
    return {field: f"Thinking about {_text_of(last['content'])}."}


def _usage(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    prompt = sum(len(str(m.get("content") or "").split()) for m in body["messages"])
    completion = len((reply["content"] or "").split()) or 1
    usage: dict[str, Any] = {"prompt_tokens": prompt}
    if body["model"] == "reasoner":  # vLLM's and DeepSeek's count, inside completion_tokens
        reasoning = sum(len(text.split()) for text in _reasoning(body).values())
        completion += reasoning
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    return {**usage, "completion_tokens": completion, "total_tokens": prompt + completion}


_FAILURES: dict[str, tuple[int, dict[str, Any], dict[str, str]]] = {
    "too-long": (
        400,
        {
            "message": "This model's maximum context length is 128 tokens.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        },
        {},
    ),
    "busy": (
        429,
        {"message": "Slow down.", "type": "requests", "code": "rate_limit_exceeded"},
        {"retry-after": "7"},
    ),
    "busy-briefly": (
        429,
        {"message": "Slow down.", "type": "requests", "code": "rate_limit_exceeded"},
        {"retry-after": "0"},
    ),
    "no-quota": (
        429,
        {
            "message": "You exceeded your quota.",
            "type": "insufficient_quota",
            "code": "insufficient_quota",
        },
        {},
    ),
}


def _chunk(head: dict[str, Any], delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    """One SSE event of a streamed chat completion."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    data = {**head, "object": "chat.completion.chunk", "choices": [choice]}
    return f"data: {json.dumps(data)}\n\n".encode()


class FakeUpstream:
    """Records every request body in ``requests`` and its key in ``keys``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.keys: list[str | None] = []  # the Authorization header of each request
        self.traceparents: list[str | None] = []  # the W3C traceparent header of each
        self.abandoned = 0
        self.slow_started = 0  # "slow" streams whose first word was sent
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"])])

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.keys.append(request.headers.get("authorization"))
        self.traceparents.append(request.headers.get("traceparent"))
        if body["model"] == "broken":
            return JSONResponse({"error": {"message": "boom", "type": "server_error"}}, 500)
        if failure := _FAILURES.get(body["model"]):
            status, error, headers = failure
            return JSONResponse({"error": error}, status, headers)
        if body["model"] == "not-json":
            return Response("<html>bad gateway</html>", media_type="application/json")
        if body["model"] == "malformed":
            if not body.get("stream"):
                return JSONResponse({"object": "chat.completion", "choices": []})
            bad = {"object": "chat.completion.chunk", "choices": [{"delta": "not an object"}]}
            return Response(f"data: {json.dumps(bad)}\n\n", media_type="text/event-stream")
        if body["model"] == "slow" and body.get("stream"):
            return StreamingResponse(self._slow_chunks(body), media_type="text/event-stream")
        if body["model"] == "keepalive" and body.get("stream"):
            return StreamingResponse(self._keepalive(), media_type="text/event-stream")
        if body["model"] == "cut" and body.get("stream"):
            return StreamingResponse(self._cut(body), media_type="text/event-stream")
        if body["model"] == "bad-sse" and body.get("stream"):
            return Response("data: {not json\n\n", media_type="text/event-stream")
        reply = _reply(body)
        finish = "tool_calls" if reply["tool_calls"] else "stop"
        head = {"id": "chatcmpl-up", "created": 1, "model": body["model"]}
        if not body.get("stream"):
            message = {"role": "assistant", **_reasoning(body), **reply}
            return JSONResponse(
                {
                    **head,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": _usage(body, reply),
                }
            )
        return StreamingResponse(
            self._chunks(head, body, reply, finish), media_type="text/event-stream"
        )

    async def _slow_chunks(self, body: dict[str, Any]) -> AsyncIterator[bytes]:
        head = {"id": "chatcmpl-slow", "created": 1, "model": body["model"]}
        finished = False
        try:
            for index in range(200):
                yield _chunk(head, {"content": "word "})
                self.slow_started += index == 0
                await asyncio.sleep(0.05)
            yield b"data: [DONE]\n\n"
            finished = True
        finally:
            if not finished:
                self.abandoned += 1

    async def _cut(self, body: dict[str, Any]) -> AsyncIterator[bytes]:
        yield _chunk(
            {"id": "chatcmpl-cut", "created": 1, "model": body["model"]}, {"content": "a "}
        )
        await asyncio.sleep(0.05)
        raise ConnectionResetError("the fake upstream drops the connection mid-stream")

    async def _keepalive(self) -> AsyncIterator[bytes]:
        finished = False
        try:
            for _ in range(200):
                yield b": keep-alive\n\n"
                await asyncio.sleep(0.05)
            finished = True
        finally:
            if not finished:
                self.abandoned += 1

    async def _chunks(
        self, head: dict[str, Any], body: dict[str, Any], reply: dict[str, Any], finish: str
    ) -> AsyncIterator[bytes]:
        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            return _chunk(head, delta, finish_reason)

        yield chunk({"role": "assistant", "content": ""})
        for field, reasoning in _reasoning(body).items():
            for word in reasoning.split(" "):
                yield chunk({field: word + " "})
                await asyncio.sleep(0)
        for word in reply["content"].split(" ") if reply["content"] else ():
            yield chunk({"content": word + " "})
            await asyncio.sleep(0)
        for index, call in enumerate(reply["tool_calls"] or ()):
            # As OpenAI streams a call: id and name with no arguments, then the
            # arguments in pieces of a few characters.
            opening = {"index": index, "id": call["id"], "type": "function"}
            function = {"name": call["function"]["name"], "arguments": ""}
            yield chunk({"tool_calls": [{**opening, "function": function}]})
            arguments = call["function"]["arguments"]
            for start in range(0, len(arguments), ARGUMENT_PIECE):
                piece = arguments[start : start + ARGUMENT_PIECE]
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                await asyncio.sleep(0)
        yield chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {
                **head,
                "object": "chat.completion.chunk",
                "choices": [],
                "usage": _usage(body, reply),
            }
            yield f"data: {json.dumps(usage)}\n\n".encode()
        yield b"data: [DONE]\n\n"


@contextmanager
def serve_in_thread(app: Any, *, lifespan: bool = False) -> Iterator[str]:
    """Run an ASGI app under uvicorn on 127.0.0.1:<free port>; yields its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="on" if lifespan else "off",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("fake server failed to start")
        threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
