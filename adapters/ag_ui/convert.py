"""Pure mapping between AG-UI's ``RunAgentInput`` and an agent run (no HTTP here).

``threadId`` is the session: the server keeps the thread's history, so of the
messages a front end sends (``HttpAgent`` sends the whole thread each time)
only those after the agent's last turn are new, less any the thread already
holds (by id). A thread the server does not hold yet takes every message
given. System and developer messages and ``context`` become the run's extra
instructions; ``tools`` are client tools (a call of one ends the run and the
next input's tool message answers it); ``resume`` answers the ``ask_user``
questions the last run ended with as interrupts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from ag_ui.core import (
    AssistantMessage,
    DeveloperMessage,
    ResumeEntry,
    RunAgentInput,
    SystemMessage,
    ToolMessage,
    UserMessage,
)
from ag_ui.core import Message as AGUIMessage

from agenthost.adapters.ag_ui.errors import AGUIError
from agenthost.adapters.runs import pending_in, resume_input
from agenthost.agents import (
    ASK_USER,
    ClientTool,
    Message,
    Part,
    RunOptions,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

DECLINED = "The user declined to answer."
"""What a cancelled interrupt tells the model."""


def to_run(body: RunAgentInput, history: Sequence[Message]) -> tuple[list[Message], RunOptions]:
    """The run's new input and options, given the thread's stored ``history``."""
    instructions = [_text(m.content, i) for i, m in _instructions(body.messages)]
    instructions += [f"{c.description}: {c.value}" for c in body.context or ()]
    tools = [
        ClientTool(t.name, t.description, t.parameters or {"type": "object", "properties": {}})
        for t in body.tools or ()
    ]
    options = RunOptions(instructions="\n\n".join(instructions) or None, tools=tools or None)
    return new_input(body, history), options


def new_input(body: RunAgentInput, history: Sequence[Message]) -> list[Message]:
    """What this run adds to the thread: answers to its interrupts, then new messages."""
    # Reasoning messages are the model's thought the UI shows (REASONING_* events): a
    # client sends them back, and no model takes them as input.
    skipped = ("system", "developer", "reasoning")
    given = [(i, m) for i, m in enumerate(body.messages) if m.role not in skipped]
    if history:
        known = {m.id for m in history if m.id}
        last = max((n for n, (_, m) in enumerate(given) if m.role == "assistant"), default=-1)
        given = [(i, m) for i, m in given[last + 1 :] if m.id not in known]
    names = {c.id: c.name for m in history for c in m.tool_calls}
    messages = [to_message(m, i, names) for i, m in given]
    pending = pending_in(history)
    answers = _answers(body.resume or (), pending)
    if answers is not None:
        messages.insert(0, answers)
    elif pending and messages and messages[0].role == "user":
        # A client that does not speak interrupts answers the question with a message.
        questions = [c for c in pending if c.name == ASK_USER.name]
        if questions:
            messages[0] = resume_input(questions, messages[0])
    if not messages:
        raise AGUIError(
            422,
            "nothing new to run: no message after the agent's last turn, and no resume",
            code="invalid_input",
        )
    return messages


def to_message(message: AGUIMessage, index: int, names: dict[str, str]) -> Message:
    """One AG-UI message as the runtime's (text parts only; activity refused)."""
    if isinstance(message, UserMessage):
        return Message(
            role="user", parts=[TextPart(text=_text(message.content, index))], id=message.id
        )
    if isinstance(message, AssistantMessage):
        parts: list[Part] = [TextPart(text=message.content)] if message.content else []
        for call in message.tool_calls or ():
            names[call.id] = call.function.name
            parts.append(
                ToolCallPart(id=call.id, name=call.function.name, arguments=call.function.arguments)
            )
        return Message(role="assistant", parts=parts, id=message.id)
    if isinstance(message, ToolMessage):
        content = _text(message.content, index)
        result = ToolResultPart(
            call_id=message.tool_call_id,
            name=names.get(message.tool_call_id, ""),
            content=message.error if message.error and not content else content,
            is_error=message.error is not None,
        )
        return Message(role="tool", parts=[result], id=message.id)
    raise AGUIError(
        422,
        f"messages[{index}]: {message.role} messages are not accepted as input",
        code="invalid_input",
    )


def _answers(resume: Sequence[ResumeEntry], pending: Sequence[ToolCallPart]) -> Message | None:
    """The tool message answering the interrupts (pending ``ask_user`` calls) ``resume`` names."""
    if not resume:
        return None
    asked = {c.id: c for c in pending if c.name == ASK_USER.name}
    results = []
    for n, entry in enumerate(resume):
        call = asked.get(entry.interrupt_id)
        if call is None:
            raise AGUIError(
                422,
                f"resume[{n}]: interrupt {entry.interrupt_id!r} is not open on this thread",
                code="invalid_input",
            )
        answer = DECLINED if entry.status == "cancelled" else _payload_text(entry.payload)
        results.append(ToolResultPart(call_id=call.id, name=call.name, content=answer))
    return Message(role="tool", parts=results)


def _payload_text(payload: Any) -> str:
    """An interrupt's answer as the tool result's text: a string, ``{"answer": …}``, or JSON."""
    if isinstance(payload, str):
        return payload
    answer = payload.get("answer") if isinstance(payload, dict) else None
    if isinstance(answer, str):
        return answer
    return orjson.dumps(payload).decode()


def _instructions(
    messages: Sequence[AGUIMessage],
) -> list[tuple[int, SystemMessage | DeveloperMessage]]:
    return [
        (i, m) for i, m in enumerate(messages) if isinstance(m, SystemMessage | DeveloperMessage)
    ]


def _text(content: Any, index: int) -> str:
    """A message's content as text; parts other than text are refused, never dropped."""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if getattr(part, "type", None) != "text":
            raise AGUIError(
                422,
                f"messages[{index}]: {getattr(part, 'type', '?')} parts are not supported; "
                "only text is",
                code="invalid_input",
            )
        texts.append(part.text)
    return "".join(texts)
