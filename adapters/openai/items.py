"""Responses API items ↔ agent messages (pure mapping, no HTTP).

Items are what the Responses and Conversations APIs show and store:
``message``, ``function_call``, ``function_call_output`` and ``compaction``
(:mod:`.compaction`), each with an id. The transcript a model sees is
rebuilt from stored items, so each item is stored once, as compact JSON.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from typing import Any

from agenthost.adapters.openai import compaction
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.schemas import ResponseContentPart, ResponseInputItem
from agenthost.agents import (
    FilePart,
    Message,
    Part,
    RunResult,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

Item = dict[str, Any]

_ROLES = {"assistant": "assistant", "system": "system", "developer": "system"}
_PREFIXES = {
    "message": "msg",
    "function_call": "fc",
    "function_call_output": "fco",
    "reasoning": "rs",
    compaction.COMPACTION: "cmp",
}


def new_id(prefix: str) -> str:
    # 32 random hex digits, as uuid4().hex gave, without building a UUID per id.
    return f"{prefix}_{secrets.token_hex(16)}"


def user_message(text: str, id: str) -> Item:
    """What :func:`to_item` makes of a user message with text ``text`` and no id of its
    own: a string ``input`` becomes this without a pydantic item per request."""
    content = [_text(text, output=False)]
    return {"type": "message", "id": id, "role": "user", "status": "completed", "content": content}


def to_item(
    item: ResponseInputItem, index: int, *, param: str = "input", id: str | None = None
) -> Item:
    """A client's input item as a stored item (with an id and a status).

    Without the client's own id it gets ``<prefix>_<id>`` (random without ``id``).
    """
    prefix = _PREFIXES.get(item.type, "item")
    id = item.id or (f"{prefix}_{id}" if id else new_id(prefix))
    if item.type == "function_call":
        if not item.call_id or not item.name:
            raise _invalid(f"{param}[{index}]", "a function_call item needs call_id and name")
        return {
            "type": "function_call",
            "id": id,
            "call_id": item.call_id,
            "name": item.name,
            "arguments": item.arguments or "{}",
            "status": "completed",
        }
    if item.type == "function_call_output":
        if not item.call_id:
            raise _invalid(f"{param}[{index}]", "a function_call_output item needs call_id")
        return {
            "type": "function_call_output",
            "id": id,
            "call_id": item.call_id,
            "output": item.output or "",
            "status": "completed",
        }
    if item.type == "reasoning":
        # Kept as sent (a client sends back the output it got); never shown to a model.
        return _reasoning(item, id, f"{param}[{index}]")
    if item.type == compaction.COMPACTION:
        return compaction.stored_compaction(id, item.encrypted_content, param=f"{param}[{index}]")
    if item.type != "message" or item.role is None:
        raise OpenAIError(
            400,
            f"input items of type {item.type!r} are not supported",
            param=f"{param}[{index}].type",
            code="unsupported_value",
        )
    output = item.role == "assistant"
    if isinstance(item.content, str):
        content = [_text(item.content, output=output)]
    else:
        where = f"{param}[{index}].content"
        content = [_content(p, f"{where}[{n}]") for n, p in enumerate(item.content or ())]
    message = {
        "type": "message",
        "id": id,
        "role": item.role,
        "status": "completed",
        "content": content,
    }
    if item.phase is not None:
        message["phase"] = item.phase
    return message


def _reasoning(item: ResponseInputItem, id: str, param: str) -> Item:
    parts = item.content if isinstance(item.content, list) else []
    if isinstance(item.content, str) or any(p.type != "reasoning_text" for p in parts):
        raise _invalid(f"{param}.content", "a reasoning item's content is reasoning_text parts")
    summary = [{"type": "summary_text", "text": p.text} for p in item.summary or ()]
    content = [reasoning_text(p.text or "") for p in parts]
    return reasoning_item(id, {"summary": summary, "content": content})


def _text(text: str, *, output: bool) -> dict[str, Any]:
    if output:
        return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {"type": "input_text", "text": text}


def _content(part: ResponseContentPart, param: str) -> dict[str, Any]:
    """One content part, checked for what its type needs."""
    if part.type == "reasoning_text":
        raise _invalid(param, "a reasoning_text part belongs in a reasoning item")
    if part.type in ("input_text", "output_text", "refusal"):
        text = part.refusal if part.type == "refusal" else part.text
        if text is None:
            raise _invalid(param, f"a {part.type} part needs its text")
        return _text(text, output=part.type != "input_text")
    if part.type == "input_image":
        if not (part.image_url or part.file_id):
            raise _invalid(param, "an input_image part needs image_url or file_id")
        return {
            "type": "input_image",
            "image_url": part.image_url,
            "file_id": part.file_id,
            "detail": "auto",
        }
    if part.type == "input_audio":
        if part.input_audio is None:
            raise _invalid(param, "an input_audio part needs input_audio")
        return {"type": "input_audio", "input_audio": part.input_audio.model_dump()}
    if not (part.file_data or part.file_url or part.file_id):
        raise _invalid(param, "an input_file part needs file_data, file_url or file_id")
    fields = ("file_data", "file_url", "file_id", "filename")
    return {"type": "input_file", **{k: getattr(part, k) for k in fields if getattr(part, k)}}


def _invalid(param: str, message: str) -> OpenAIError:
    return OpenAIError(400, message, param=param, code="invalid_value")


def to_messages(items: Iterable[Item]) -> list[Message]:
    """Items as the transcript a model sees.

    Function calls join the assistant message before them and outputs join
    one tool message, as Chat Completions requires (one assistant message
    with every call, then their results).
    """
    messages: list[Message] = []
    for item in items:
        kind = item["type"]
        if kind == "reasoning":  # the model's own thought: an upstream takes none back
            continue
        if kind == "message":
            role = _ROLES.get(item["role"], "user")
            parts = [p for c in item["content"] if (p := _part(c)) is not None]
            messages.append(Message(role=role, parts=parts))
            continue
        if kind == compaction.COMPACTION:
            messages.append(compaction.to_message(item))
            continue
        if kind == "function_call":
            part: Part = ToolCallPart(
                id=item["call_id"], name=item["name"], arguments=item["arguments"]
            )
            role = "assistant"
        else:
            part = ToolResultPart(call_id=item["call_id"], name="", content=item["output"])
            role = "tool"
        if messages and messages[-1].role == role:
            messages[-1] = Message(role=role, parts=[*messages[-1].parts, part])
        else:
            messages.append(Message(role=role, parts=[part]))
    return messages


def _part(content: dict[str, Any]) -> Part | None:
    kind = content["type"]
    if kind in ("input_text", "output_text"):
        return TextPart(text=content["text"])
    if kind == "input_image":
        url = content.get("image_url") or content.get("file_id")
        return FilePart(url=url, mime_type=mime_of(url) or "image/*")
    if kind == "input_audio":
        audio = content["input_audio"]
        return FilePart(data=audio["data"], mime_type=f"audio/{audio['format']}")
    if kind == "input_file":
        data = content.get("file_data")
        mime = mime_of(data)
        if data and mime:
            data = data.split(",", 1)[1]
        url = content.get("file_url") or content.get("file_id")
        return FilePart(url=url, data=data, mime_type=mime, name=content.get("filename"))
    return None


def mime_of(url: str | None) -> str | None:
    """The media type of a ``data:`` URL (None for any other URL)."""
    if url and url.startswith("data:") and ";" in url and "," in url:
        return url[5 : url.index(";")]
    return None


def output_items(result: RunResult, turn: str) -> list[Item]:
    """The visible output of a run: its reasoning (if its upstream sent any), its answer,
    then any calls it waits on the client for.

    Ids carry ``turn`` (the response id's hex: ``msg_<turn>``,
    ``fc_<turn>_<n>``) so that an ``item_reference`` finds them. The agent's
    own tool calls stay inside the agent: they are not items.
    """
    items: list[Item] = []
    if result.reasoning:
        items.append(reasoning_item(f"rs_{turn}", {"content": [reasoning_text(result.reasoning)]}))
    if result.output or not result.pending:
        items.append(message_item(f"msg_{turn}", result.output))
    items.extend(
        function_call_item(call, id=f"fc_{turn}_{n}") for n, call in enumerate(result.pending)
    )
    return items


def message_item(id: str, text: str | None, *, status: str = "completed") -> Item:
    content = [] if text is None else [_text(text, output=True)]
    return {"type": "message", "id": id, "status": status, "role": "assistant", "content": content}


def reasoning_item(id: str, fields: dict[str, Any], *, status: str = "completed") -> Item:
    """A ``reasoning`` item: an upstream's reasoning is raw text (``content``), never a
    ``summary`` (no model here writes one)."""
    return {
        "type": "reasoning",
        "id": id,
        "summary": fields.get("summary") or [],
        "content": fields.get("content") or [],
        "status": status,
    }


def reasoning_text(text: str) -> dict[str, str]:
    return {"type": "reasoning_text", "text": text}


def function_call_item(
    call: ToolCallPart, *, id: str | None = None, arguments: str | None = None
) -> Item:
    return {
        "type": "function_call",
        "id": id or f"fc_{call.id.removeprefix('call_')}",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments if arguments is None else arguments,
        "status": "completed",
    }


def page(items: Sequence[Item], *, limit: int, order: str, after: str | None) -> dict[str, Any]:
    """One page of a list of items, as OpenAI lists them (``after`` is an item id)."""
    ordered = list(items) if order == "asc" else list(reversed(items))
    if after is not None:
        ids = [item["id"] for item in ordered]
        if after not in ids:
            raise _invalid("after", f"no item with id {after!r} in this list")
        ordered = ordered[ids.index(after) + 1 :]
    data = ordered[:limit]
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": len(ordered) > limit,
    }
