"""Every /v1 answer the tests get, checked against OpenAI's published OpenAPI document.

``fixtures/openai-openapi-schemas.json`` holds the schemas of the document
(repository ``openai/openai-openapi``, commit in its ``source``) that the
served responses and stream events reach. :class:`SchemaCheckingTransport`
wraps the in-process transport: each JSON body and each server-sent event
is validated as it arrives, so every test that talks to /v1 checks shapes.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from functools import cache
from pathlib import Path
from typing import Any

import httpx
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

FIXTURE = Path(__file__).parent / "fixtures" / "openai-openapi-schemas.json"

# (method, path under /v1) → schema of a 2xx JSON answer.
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(f"^{p}$"), s)
    for m, p, s in [
        ("GET", "/models", "ListModelsResponse"),
        ("GET", "/models/[^/]+", "Model"),
        ("POST", "/chat/completions", "CreateChatCompletionResponse"),
        ("POST", "/responses", "Response"),
        ("GET", "/responses/[^/]+", "Response"),
        ("GET", "/responses/[^/]+/input_items", "ResponseItemList"),
        ("POST", "/conversations", "ConversationResource"),
        ("GET", "/conversations/[^/]+", "ConversationResource"),
        ("POST", "/conversations/[^/]+", "ConversationResource"),
        ("DELETE", "/conversations/[^/]+", "DeletedConversationResource"),
        ("GET", "/conversations/[^/]+/items", "ConversationItemList"),
        ("POST", "/conversations/[^/]+/items", "ConversationItemList"),
        ("GET", "/conversations/[^/]+/items/[^/]+", "ConversationItem"),
        ("DELETE", "/conversations/[^/]+/items/[^/]+", "ConversationResource"),
    ]
]


def _nullable(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` (still in parts of the document) as JSON Schema."""
    if isinstance(node, list):
        return [_nullable(n) for n in node]
    if not isinstance(node, dict):
        return node
    node = {k: _nullable(v) for k, v in node.items()}
    if node.pop("nullable", False) is True:
        return {"anyOf": [node, {"type": "null"}]}
    return node


@cache
def _document() -> dict[str, Any]:
    document = dict(_nullable(json.loads(FIXTURE.read_text())))
    # The document types Response.usage as never null, yet OpenAI's own
    # response.created events carry "usage": null (its API reference shows
    # them so) and the Open Responses specification requires it, nullable.
    for part in _schemas(document["components"]["schemas"]["Response"]):
        if "usage" in part.get("properties", {}):
            usage = part["properties"]["usage"]
            part["properties"]["usage"] = {"anyOf": [usage, {"type": "null"}]}
    return document


def _schemas(node: Any) -> list[dict[str, Any]]:
    """``node`` and every schema nested in it."""
    if isinstance(node, list):
        return [s for n in node for s in _schemas(n)]
    if not isinstance(node, dict):
        return []
    return [node, *(s for v in node.values() for s in _schemas(v))]


@cache
def _validator(name: str) -> Draft202012Validator:
    schema = {**_document(), "$ref": f"#/components/schemas/{name}"}
    return Draft202012Validator(schema)


@cache
def _event_schemas() -> dict[str, str]:
    """Stream event type → the schema of that event."""
    schemas = _document()["components"]["schemas"]
    events: dict[str, str] = {}
    for ref in schemas["ResponseStreamEvent"]["anyOf"]:
        name = ref["$ref"].rsplit("/", 1)[-1]
        for kind in schemas[name].get("properties", {}).get("type", {}).get("enum", ()):
            events[kind] = name
    return events


def validate(name: str, instance: Any) -> None:
    """Fail with the most telling error when ``instance`` does not match schema ``name``."""
    error = best_match(_validator(name).iter_errors(instance))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        raise AssertionError(f"not a valid {name} at {where or '(root)'}: {error.message}")


def validate_event(event: str | None, data: Any) -> None:
    """One Responses stream event: its ``event:`` line, then its object."""
    kind = data.get("type")
    assert event == kind, f"the event line {event!r} does not name the event {kind!r}"
    assert kind in _event_schemas(), f"{kind!r} is not a Responses stream event"
    validate(_event_schemas()[kind], data)


def schema_for(method: str, path: str, status: int) -> str | None:
    if status >= 400:
        return "ErrorResponse"
    sub = path.removeprefix("/v1")
    for route_method, pattern, name in ROUTES:
        if route_method == method and pattern.match(sub):
            return name
    return None


class SchemaCheckingTransport(httpx.AsyncBaseTransport):
    """Validates every /v1 answer (JSON bodies, SSE events) passing through."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.checked = 0  # bodies and events validated: a test can see checks ran

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        path = request.url.path
        if not path.startswith("/v1/") or request.method == "HEAD":
            return response
        name = schema_for(request.method, path, response.status_code)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            events = _Stream(self._events(path, response.aiter_raw()), response)
            return httpx.Response(response.status_code, headers=response.headers, stream=events)
        body = await response.aread()
        if name is not None:
            validate(name, json.loads(body))
            self.checked += 1
        return httpx.Response(response.status_code, headers=response.headers, content=body)

    async def _events(self, path: str, raw: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        buffer = b""
        async for chunk in raw:
            yield chunk
            buffer += chunk
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                self._check_event(path, block.decode())

    def _check_event(self, path: str, block: str) -> None:
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        data = fields.get("data")
        if data is None or data == "[DONE]":
            return
        value = json.loads(data)
        if "error" in value and "type" not in value:
            validate("ErrorResponse", value)
        elif path.endswith("/chat/completions"):
            assert "event" not in fields, "Chat Completions events have no event line"
            validate("CreateChatCompletionStreamResponse", value)
        else:
            validate_event(fields.get("event"), value)
        self.checked += 1


class _Stream(httpx.AsyncByteStream):
    def __init__(self, chunks: AsyncIterator[bytes], inner: httpx.Response) -> None:
        self._chunks = chunks
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            yield chunk

    async def aclose(self) -> None:
        close = getattr(self._chunks, "aclose", None)
        if close is not None:
            await close()
        await self._inner.aclose()
