"""Pure mapping between Orchestrate's chat body and an agent run (no HTTP here).

With a thread (``X-IBM-THREAD-ID`` or ``extra_body.thread_id``) the server
keeps the thread's history, as every adapter keyed by principal: of the
messages Orchestrate sends (it sends the thread's transcript) only those
after the last assistant turn are new. A thread the server does not hold
yet takes every message given; with no thread the run is stateless and the
transcript is its whole input, as Chat Completions. System (and developer)
messages become the run's extra instructions.

A supervisor that routes to this agent appends a handoff: an assistant
``transfer_to_<agent>`` tool call and the tool message answering it. It is
how Orchestrate got here, not a call for this agent to run: handoff calls
and their results are left out of the input, wherever they stand, as IBM's
reference external agents do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from agenthost.adapters.orchestrate.errors import invalid
from agenthost.adapters.orchestrate.schemas import ChatMessage, ChatRequest
from agenthost.adapters.runs import pending_in, resume_input
from agenthost.agents import (
    ASK_USER,
    Message,
    Part,
    RunOptions,
    RunResult,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    question_of,
)

HANDOFF_PREFIX = "transfer_to_"
"""The name Orchestrate gives a handoff tool call (compared without case)."""


def is_handoff(name: str) -> bool:
    return name.lower().startswith(HANDOFF_PREFIX)


def to_run(body: ChatRequest, history: Sequence[Message]) -> tuple[list[Message], RunOptions]:
    """The run's new input and options, given the thread's stored ``history``."""
    given = list(enumerate(body.messages))
    instructions = [m.text for _, m in given if m.role in ("system", "developer") and m.text]
    given = _without_handoffs([(i, m) for i, m in given if m.role not in ("system", "developer")])
    if history:
        last = max((n for n, (_, m) in enumerate(given) if m.role == "assistant"), default=-1)
        given = given[last + 1 :]
    names = {c.id: c.name for m in history for c in m.tool_calls}
    messages = [to_message(m, i, names) for i, m in given]
    pending = [c for c in pending_in(history) if c.name == ASK_USER.name]
    if pending and messages and messages[0].role == "user":
        messages[0] = resume_input(pending, messages[0])  # the reply answers the question
    if not messages:
        raise invalid(
            "messages: nothing new to run (no user message after the agent's last turn)",
            code="empty_turn",
        )
    options = RunOptions(instructions="\n\n".join(instructions) or None)
    return messages, options


def _without_handoffs(given: list[tuple[int, ChatMessage]]) -> list[tuple[int, ChatMessage]]:
    """``given`` less handoff calls and the tool messages answering them."""
    handoffs = {
        call.id
        for _, m in given
        if m.role == "assistant"
        for call in m.tool_calls or ()
        if is_handoff(call.function.name)
    }
    if not handoffs:
        return given
    kept = []
    for index, message in given:
        if message.role == "tool" and message.tool_call_id in handoffs:
            continue
        if message.role == "assistant" and message.tool_calls:
            calls = [c for c in message.tool_calls if c.id not in handoffs]
            if not calls and not message.text:
                continue
            message = message.model_copy(update={"tool_calls": calls or None})
        kept.append((index, message))
    return kept


def to_message(message: ChatMessage, index: int, names: dict[str, str]) -> Message:
    """One Orchestrate message as the runtime's (text only: other content is a 400)."""
    if message.role in ("user", "human"):
        return Message(role="user", parts=[TextPart(text=message.text)])
    if message.role == "assistant":
        parts: list[Part] = [TextPart(text=message.text)] if message.text else []
        for call in message.tool_calls or ():
            names[call.id] = call.function.name
            arguments = call.function.arguments
            if not isinstance(arguments, str):
                arguments = orjson.dumps(arguments).decode()
            parts.append(ToolCallPart(id=call.id, name=call.function.name, arguments=arguments))
        return Message(role="assistant", parts=parts)
    if message.tool_call_id is None:
        raise invalid(f"messages.{index}.tool_call_id: a tool message needs the call it answers")
    name = names.get(message.tool_call_id) or message.name or ""
    result = ToolResultPart(call_id=message.tool_call_id, name=name, content=message.text)
    return Message(role="tool", parts=[result])


def answer_text(result: RunResult) -> str:
    """What the user reads: the answer, then any question the run ends waiting on."""
    questions = [q for c in result.pending if (q := question_of(c)) is not None]
    return "\n\n".join(t for t in (result.output, *questions) if t)


def to_args(arguments: str) -> Any:
    """A call's JSON arguments as ``args`` (an object; anything else wrapped)."""
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": value}


def to_completion(
    result: RunResult, *, id: str, model: str, created: int, thread_id: str | None
) -> dict[str, Any]:
    """The non-streamed answer: a ``chat.completion`` as the external-agent spec gives it."""
    usage = result.usage
    completion: dict[str, Any] = {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer_text(result)},
                "finish_reason": result.finish_reason if not result.pending else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens,
        },
    }
    if thread_id is not None:
        completion["thread_id"] = thread_id
    return completion
