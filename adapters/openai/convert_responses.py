"""Pure mapping between the Responses API and agent runs (no HTTP here)."""

from __future__ import annotations

import time
from typing import Any

from agenthost.adapters.openai.checks import check_format, client_tool, refuse, tool_choice
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.adapters.openai.items import Item, new_id, to_item, user_message
from agenthost.adapters.openai.references import reference
from agenthost.adapters.openai.schemas import ResponseRequest
from agenthost.agents import Agent, ClientTool, ModelSettings, RunOptions, RunResult, Usage


def check_supported(request: ResponseRequest, agent: Agent) -> None:
    """Refuse, naming the param, what the agent cannot honour (never drop it)."""
    if request.top_logprobs:
        raise refuse("top_logprobs", "logprobs are")
    if request.previous_response_id and request.conversation:
        raise OpenAIError(
            400,
            "previous_response_id and conversation cannot be used together",
            param="conversation",
            code="invalid_value",
        )
    kind = request.text.format.type if request.text and request.text.format else "text"
    check_format(kind, agent, param="text.format")


def conversation_id(request: ResponseRequest) -> str | None:
    conversation = request.conversation
    return (
        conversation if isinstance(conversation, str) or conversation is None else conversation.id
    )


def input_items(request: ResponseRequest, turn: str = "") -> tuple[list[str], list[Item]]:
    """This turn's instructions (system and developer items) and its stored input items.

    Items the server names get ids carrying ``turn`` (the response id's
    hex), so that an ``item_reference`` finds them; ``item_reference``
    entries stay placeholders for :func:`references.resolve`.
    """
    instructions = [request.instructions] if request.instructions else []
    if isinstance(request.input, str):  # one user message: no input item to convert
        id = f"msg_{turn}_0" if turn else new_id("msg")
        return instructions, [user_message(request.input, id)]
    raw = request.input
    items: list[Item] = []
    for index, entry in enumerate(raw):
        if entry.type == "item_reference":
            items.append(reference(entry, index))
            continue
        item = to_item(entry, index, id=f"{turn}_{index}" if turn else None)
        if item["type"] == "message" and item["role"] in ("system", "developer"):
            # Instructions hold for this turn only: never stored, as with OpenAI.
            instructions.append("".join(c.get("text", "") for c in item["content"]))
        else:
            items.append(item)
    if not items:
        raise OpenAIError(
            400, "input must contain at least one item", param="input", code="invalid_value"
        )
    return instructions, items


def to_options(request: ResponseRequest, instructions: list[str]) -> RunOptions:
    tools = [
        client_tool(t.type, t.name, t.description, t.parameters, param=f"tools[{i}]")
        for i, t in enumerate(request.tools or ())
    ]
    format = request.text.format if request.text and request.text.format else None
    settings = ModelSettings(
        temperature=request.temperature,
        top_p=request.top_p,
        presence_penalty=request.presence_penalty,
        frequency_penalty=request.frequency_penalty,
        max_tokens=request.max_output_tokens,
        response_format=to_response_format(format.model_dump()) if format else None,
        tool_choice=tool_choice(request.tool_choice, tools),
        parallel_tool_calls=request.parallel_tool_calls if tools else None,
        reasoning_effort=request.reasoning.effort if request.reasoning else None,
    )
    return RunOptions(
        instructions="\n\n".join(instructions) or None,
        tools=tools or None,
        model_settings=settings,
        # A pending call is the client's function call to answer: a question to approve
        # one is not, so a call that needs approval is refused (docs/configuration.md).
        can_ask=False,
    )


def to_response_format(format: dict[str, Any]) -> dict[str, Any] | None:
    """Responses' ``text.format`` → Chat Completions' ``response_format``."""
    kind = format.get("type", "text")
    if kind == "json_schema":
        schema = {k: format[k] for k in ("name", "schema", "strict", "description") if k in format}
        return {"type": "json_schema", "json_schema": schema}
    return None if kind == "text" else {"type": kind}


def to_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


# Fields of a response object that rarely differ: stored only when they do.
DEFAULTS: dict[str, Any] = {
    "object": "response",
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "previous_response_id": None,
    "conversation": None,
    "metadata": {},
    "parallel_tool_calls": True,
    "temperature": 1.0,
    "top_p": 1.0,
    "max_output_tokens": None,
    "tool_choice": "auto",
    "tools": [],
    "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "truncation": "disabled",
    "reasoning": {"effort": None, "summary": None},
    "service_tier": "default",
    "store": True,
    "background": False,
    # Required by the Open Responses specification (openresponses.org).
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "top_logprobs": 0,
    "max_tool_calls": None,
    "safety_identifier": None,
    "prompt_cache_key": None,
}


def compact(response: dict[str, Any]) -> dict[str, Any]:
    """What is stored of a response: no default fields, no id or parent (the
    store keys by them), usage as ``[input, output]`` tokens (``[input, output,
    reasoning]`` when the upstream counted reasoning)."""
    kept = {
        k: v
        for k, v in response.items()
        if k not in ("id", "previous_response_id", "usage")
        and (k not in DEFAULTS or DEFAULTS[k] != v)
    }
    if (usage := response.get("usage")) is not None:
        kept["usage"] = [usage["input_tokens"], usage["output_tokens"]]
        if reasoning := (usage.get("output_tokens_details") or {}).get("reasoning_tokens"):
            kept["usage"].append(reasoning)
    return kept


def expand(stored: dict[str, Any], *, id: str, parent: str | None) -> dict[str, Any]:
    """The response object again, from what :func:`compact` kept."""
    response = {"id": id, **DEFAULTS, **stored, "previous_response_id": parent, "usage": None}
    if (usage := stored.get("usage")) is not None:
        # Two numbers: no reasoning counted (or stored before it was counted).
        reasoning = usage[2] if len(usage) > 2 else 0
        response["usage"] = to_usage(Usage(usage[0], usage[1], reasoning_tokens=reasoning))
    return response


def to_response(
    request: ResponseRequest,
    options: RunOptions,
    *,
    id: str,
    created_at: int,
    model: str,
    status: str = "completed",
    output: list[Item] | None = None,
    result: RunResult | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The response object, every field the OpenAPI document requires included."""
    incomplete = result is not None and result.finish_reason == "length"
    conversation = conversation_id(request)
    status = "incomplete" if incomplete else status
    settings = options.model_settings or ModelSettings()
    text = request.text.format.model_dump() if request.text and request.text.format else None
    verbosity = request.text.verbosity if request.text else None
    response = {
        "id": id,
        **DEFAULTS,
        "created_at": created_at,
        "completed_at": int(time.time()) if status == "completed" else None,
        "status": status,
        "model": model,
        "output": output or [],
        "instructions": request.instructions,
        "previous_response_id": request.previous_response_id,
        "conversation": {"id": conversation} if conversation else None,
        "error": error,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "metadata": request.metadata or {},
        "parallel_tool_calls": request.parallel_tool_calls is not False,
        "temperature": 1.0 if request.temperature is None else request.temperature,
        "top_p": 1.0 if request.top_p is None else request.top_p,
        "presence_penalty": request.presence_penalty or 0.0,
        "frequency_penalty": request.frequency_penalty or 0.0,
        "max_output_tokens": request.max_output_tokens,
        "tool_choice": _tool_choice(settings.tool_choice),
        "tools": [_tool(t) for t in options.tools or () if isinstance(t, ClientTool)],
        "text": {"format": text or {"type": "text"}, "verbosity": verbosity or "medium"},
        "store": request.store,
        "background": bool(request.background),
    }
    # What the request set of these is shown as it was relayed (defaults otherwise).
    if (reasoning := request.reasoning) is not None:
        summary = reasoning.summary or reasoning.generate_summary
        response["reasoning"] = {"effort": reasoning.effort, "summary": summary}
    if request.service_tier not in (None, "auto"):
        response["service_tier"] = request.service_tier
    for name in ("safety_identifier", "prompt_cache_key", "user"):
        if (value := getattr(request, name)) is not None:
            response[name] = value
    # No usage yet while in progress: null, as OpenAI sends it in response.created
    # and as the Open Responses specification requires (present, nullable).
    response["usage"] = None if result is None else to_usage(result.usage)
    return response


def _tool_choice(choice: str | None) -> str | dict[str, str]:
    if choice is None:
        return "auto"
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "name": choice}


def _tool(tool: ClientTool) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description or None,
        "parameters": tool.parameters,
        "strict": False,
    }
