"""The request bodies of /v1 in the OpenAPI document (the routes read them themselves).

What is documented is a subset every request of which the server accepts
(schemathesis checks that), not the whole of OpenAI's API.
"""

from __future__ import annotations

from typing import Any

ROLES = ["system", "developer", "user", "assistant"]
METADATA = {
    "type": "object",
    "maxProperties": 16,
    "propertyNames": {"maxLength": 64},
    "additionalProperties": {"type": "string", "maxLength": 512},
}
ITEM = {
    "type": "object",
    "required": ["role"],  # type defaults to "message", content to empty
    "properties": {
        "type": {"enum": ["message"]},
        "role": {"enum": ROLES},
        "content": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
}  # other fields are ignored
CHAT = {
    "type": "object",
    "required": ["model", "messages"],
    "properties": {
        "model": {"type": "string"},
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["role", "content"],
                "properties": {"role": {"enum": ROLES}, "content": {"type": "string"}},
                "additionalProperties": False,
            },
        },
        "stream": {"type": "boolean"},
    },
    "additionalProperties": False,
}
RESPONSE = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string"},
        "input": {"type": "string"},
        "instructions": {"type": "string"},
        "stream": {"type": "boolean"},
        "store": {"type": "boolean"},
    },
    "additionalProperties": False,
}
COMPACT = {
    "type": "object",
    "required": ["model", "input"],
    "properties": {
        "model": {"type": "string"},
        "input": {"type": "string", "minLength": 1},
        "instructions": {"type": "string"},
    },
    "additionalProperties": False,
}
NEW_CONVERSATION = {  # other fields are ignored, as OpenAI's API ignores them
    "type": "object",
    "properties": {
        "items": {"anyOf": [{"type": "array", "maxItems": 20, "items": ITEM}, {"type": "null"}]},
        "metadata": {"anyOf": [METADATA, {"type": "null"}]},
    },
}
CONVERSATION_UPDATE = {
    "type": "object",
    "required": ["metadata"],
    "properties": {"metadata": METADATA},
    "additionalProperties": False,
}
NEW_ITEMS = {
    "type": "object",
    "required": ["items"],
    "properties": {"items": {"type": "array", "minItems": 1, "maxItems": 20, "items": ITEM}},
    "additionalProperties": False,
}


def json_body(schema: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    """``openapi_extra`` for a route whose JSON body follows ``schema``."""
    content = {"application/json": {"schema": schema}}
    return {"requestBody": {"required": required, "content": content}}
