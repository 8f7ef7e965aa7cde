"""Code agents for the config-declared MCP tests: one that answers with its
typed arguments, one that asks its user with a form."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson

from agenthost.agents import (
    BaseAgent,
    DataPart,
    Message,
    RunFinished,
    RunOptions,
    RunResult,
    RunUpdate,
    ToolCallPart,
    ToolResultPart,
)
from agenthost.agents.tools import ASK_USER

FORM = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "title": "User name"},
        "age": {"type": "integer", "default": 30},
    },
    "required": ["username"],
}


class ArgumentsEcho(BaseAgent):
    """Answers with the JSON of the data part it was given."""

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        data = [p.data for m in input for p in m.parts if isinstance(p, DataPart)]
        text = orjson.dumps(data).decode()
        yield RunFinished(RunResult(text, [*input, Message.assistant(text)]))


class Signup(BaseAgent):
    """Asks with :data:`FORM`, then answers with the user's action and content."""

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        answers = [p for p in input[-1].parts if isinstance(p, ToolResultPart)]
        if answers:
            answer = orjson.loads(answers[0].content)
            content = orjson.dumps(answer.get("content")).decode()
            text = f"signed up: {answer['action']} {content}"
            yield RunFinished(RunResult(text, [*input, Message.assistant(text)]))
            return
        arguments = orjson.dumps({"question": "Who are you?", "schema": FORM}).decode()
        call = ToolCallPart(id="who", name=ASK_USER.name, arguments=arguments)
        asked = Message(role="assistant", parts=[call])
        yield RunFinished(
            RunResult("", [*input, asked], finish_reason="tool_calls", pending=[call])
        )


arguments_echo = ArgumentsEcho("lookup", "Answers with its arguments.")
signup = Signup("signup", "Asks who you are.")
