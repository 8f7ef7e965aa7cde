"""Pure mapping from ``useChat``'s ``UIMessage`` list to an agent run (no HTTP here).

The transport sends the whole chat each time, so a request is stateless, as
Chat Completions is: system messages become extra instructions, user text
parts user messages, and an assistant message its text and tool calls, each
call's output (``output-available``, ``output-error``) a tool message after
it (a call that never ran, denied or left unapproved, is told so). Reasoning,
step, source and data parts are the UI's own and are skipped; a file part is
refused, never dropped. The one exception is the answer to an approval
(:func:`replies_in`), which resumes the conversation the server kept
(:mod:`agenthost.adapters.ai_sdk.approvals`).
"""

from __future__ import annotations

from typing import Any

import orjson

from agenthost.adapters.ai_sdk.approvals import Reply
from agenthost.adapters.ai_sdk.errors import invalid
from agenthost.adapters.ai_sdk.schemas import ChatRequest, UIMessage, UIPart
from agenthost.agents import Message, Part, RunOptions, TextPart, ToolCallPart, ToolResultPart
from agenthost.agents.tools.approvals import DECLINED

SKIPPED = ("reasoning", "step-start", "source-url", "source-document")
APPROVED = "approval-responded"
ANSWERED = ("output-available", "output-error")
NOT_RUN = ("output-denied", "approval-requested", APPROVED)
"""States of a call in the chat's history that never ran (denied, or left unanswered)."""


def to_run(body: ChatRequest) -> tuple[list[Message], RunOptions]:
    """The run's input (the whole chat) and its options."""
    messages: list[Message] = []
    for index, message in enumerate(body.messages):
        if message.role == "system":
            continue
        if message.role == "user":
            messages.append(
                Message(role="user", parts=[TextPart(text=_text(message, index))], id=message.id)
            )
        else:
            messages += _assistant(message, index)
    if not messages or messages[-1].role == "assistant":
        raise invalid("the last message must be the user's, or an assistant's with tool outputs")
    return messages, options_of(body)


def options_of(body: ChatRequest) -> RunOptions:
    """The run's options: the chat's system messages as extra instructions."""
    instructions = [_text(m, i) for i, m in enumerate(body.messages) if m.role == "system"]
    return RunOptions(instructions="\n\n".join(instructions) or None)


def replies_in(body: ChatRequest) -> list[Reply]:
    """The answers to a run that asked for approval: the tool parts of the last step of the
    last (assistant) message, when one of them is ``approval-responded``; else none (the
    request is a new turn, or answers ``ask_user`` only, read with the whole chat)."""
    last = body.messages[-1]
    if last.role != "assistant" or not any(p.state == APPROVED for p in last.parts):
        return []
    starts = [n for n, p in enumerate(last.parts) if p.type == "step-start"]
    replies: list[Reply] = []
    for n, part in enumerate(last.parts[starts[-1] + 1 if starts else 0 :]):
        if tool_name(part) is None or part.state not in (APPROVED, *ANSWERED):
            continue
        if part.tool_call_id is None:
            raise invalid(f"the last message's tool part {n} needs toolCallId")
        if part.state == APPROVED:
            if part.approval is None or part.approval.approved is None:
                raise invalid(
                    f"the call {part.tool_call_id!r} is approval-responded: it needs "
                    "approval.id and approval.approved"
                )
            replies.append(Reply(part.tool_call_id, part.approval.id, part.approval.approved))
        elif part.state == "output-available":
            replies.append(Reply(part.tool_call_id, output=_output(part.output)))
        else:
            error = part.error_text or "the tool failed"
            replies.append(Reply(part.tool_call_id, output=error, is_error=True))
    return replies


def _assistant(message: UIMessage, index: int) -> list[Message]:
    """An assistant message as the turns it holds: text and calls, then the calls' results."""
    out: list[Message] = []
    parts: list[Part] = []
    results: list[ToolResultPart] = []

    def flush() -> None:
        if parts:
            out.append(Message(role="assistant", parts=list(parts)))
        if results:
            out.append(Message(role="tool", parts=list(results)))
        parts.clear()
        results.clear()

    for n, part in enumerate(message.parts):
        name = tool_name(part)
        if part.type == "text":
            if results:  # text after tool results: the next step
                flush()
            if part.text:
                parts.append(TextPart(text=part.text))
        elif name is not None:
            if results and not parts:
                flush()
            if part.tool_call_id is None:
                raise invalid(f"messages[{index}].parts[{n}]: a tool part needs toolCallId")
            arguments = orjson.dumps(part.input if part.input is not None else {}).decode()
            parts.append(ToolCallPart(id=part.tool_call_id, name=name, arguments=arguments))
            if part.state == "output-available":
                results.append(
                    ToolResultPart(
                        call_id=part.tool_call_id, name=name, content=_output(part.output)
                    )
                )
            elif part.state == "output-error":
                content = part.error_text or "the tool failed"
                results.append(
                    ToolResultPart(
                        call_id=part.tool_call_id, name=name, content=content, is_error=True
                    )
                )
            elif part.state in NOT_RUN:
                results.append(
                    ToolResultPart(
                        call_id=part.tool_call_id, name=name, content=DECLINED, is_error=True
                    )
                )
        elif part.type == "file":
            raise invalid(f"messages[{index}].parts[{n}]: file parts are not supported")
    flush()
    return out


def tool_name(part: UIPart) -> str | None:
    """The tool a part calls (``tool-NAME`` or ``dynamic-tool``), None for other parts."""
    if part.type == "dynamic-tool":
        return part.tool_name or ""
    if part.type.startswith("tool-"):
        return part.type.removeprefix("tool-")
    return None


def _output(output: Any) -> str:
    return output if isinstance(output, str) else orjson.dumps(output).decode()


def _text(message: UIMessage, index: int) -> str:
    texts: list[str] = []
    for n, part in enumerate(message.parts):
        if part.type == "text":
            texts.append(part.text or "")
        elif part.type == "file":
            raise invalid(f"messages[{index}].parts[{n}]: file parts are not supported")
        elif part.type not in SKIPPED and not part.type.startswith("data-"):
            raise invalid(
                f"messages[{index}].parts[{n}]: {part.type!r} parts are not supported here"
            )
    return "".join(texts)


def usage_metadata(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    """``finish``'s ``messageMetadata``: the run's usage."""
    return {
        "usage": {
            "inputTokens": input_tokens,
            "outputTokens": output_tokens,
            "totalTokens": input_tokens + output_tokens,
        }
    }
