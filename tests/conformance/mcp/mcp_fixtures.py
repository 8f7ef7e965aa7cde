"""The agents the MCP conformance suite calls by name (its fixture tools).

Each one acts through the runtime's ordinary outputs only: streamed text,
file parts in its answer, tool calls of its model, a failure. The MCP
adapter maps those like any agent's; it knows nothing of the suite.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import orjson

from agenthost.agents import (
    BaseAgent,
    ChatAgent,
    DataPart,
    FilePart,
    Message,
    ModelError,
    RunFinished,
    RunOptions,
    RunResult,
    RunUpdate,
    TextDelta,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    tool,
)
from agenthost.agents import Part as AgentPart
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.tools import ASK_USER

# A 1x1 red PNG and a tiny WAV, as the suite's reference server sends.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
    b"\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()
IMAGE = FilePart(data=PNG, mime_type="image/png", name="red.png")
AUDIO = FilePart(data=WAV, mime_type="audio/wav", name="test.wav")
RESOURCE = FilePart(
    data=base64.b64encode(b"This is an embedded resource content.").decode(),
    mime_type="text/plain",
    url="test://embedded-resource",
)


@dataclass(frozen=True)
class Answer:
    """Text pieces (``gap`` seconds apart when streamed) and parts after them."""

    pieces: tuple[str, ...] = ()
    parts: tuple[AgentPart, ...] = ()
    gap: float = 0.0
    fail: str | None = None


class FixtureAgent(BaseAgent):
    """Answers every call with the same :class:`Answer`."""

    def __init__(self, name: str, answer: Answer, description: str) -> None:
        super().__init__(name, description)
        self.answer = answer

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        answer = self.answer
        for index, piece in enumerate(answer.pieces):
            if index and answer.gap:
                await anyio.sleep(answer.gap)
            if stream:
                yield TextDelta(piece)
        if answer.fail is not None:
            raise ModelError(answer.fail)
        text = "".join(answer.pieces)
        parts: list[AgentPart] = [TextPart(text=text)] if text else []
        reply = Message(role="assistant", parts=[*parts, *answer.parts])
        yield RunFinished(RunResult(text, [*input, reply]))


def fixture(name: str, answer: Answer, description: str) -> FixtureAgent:
    return FixtureAgent(name, answer, description)


simple_text = fixture(
    "test_simple_text",
    Answer(pieces=("This is a simple text response for testing.",)),
    "Answers with text.",
)
image_content = fixture("test_image_content", Answer(parts=(IMAGE,)), "Answers with an image.")
audio_content = fixture("test_audio_content", Answer(parts=(AUDIO,)), "Answers with audio.")
embedded_resource = fixture(
    "test_embedded_resource",
    Answer(pieces=("An embedded resource:",), parts=(RESOURCE,)),
    "Answers with an embedded resource.",
)
multiple_content_types = fixture(
    "test_multiple_content_types",
    Answer(pieces=("Multiple content types test:",), parts=(IMAGE, RESOURCE)),
    "Answers with text, an image and a resource.",
)
error_handling = fixture(
    "test_error_handling",
    Answer(fail="This tool intentionally returns an error for testing"),
    "Always fails.",
)
tool_with_progress = fixture(
    "test_tool_with_progress",
    Answer(pieces=("0% ", "50% ", "100%"), gap=0.06),
    "Streams its answer in three pieces (three progress notifications).",
)


@tool
def step(number: int) -> str:
    """One step of the work."""
    return f"step {number} done"


def _three_steps(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return "Tool with logging executed successfully"
    return [call("step", f'{{"number": {n}}}') for n in (1, 2, 3)]


# Three tool calls: three "tool_started" log messages at info level.
tool_with_logging = ChatAgent(
    "test_tool_with_logging",
    FunctionModel(_three_steps, name="three-steps"),
    tools=(step,),
    description="Runs three steps; each is logged.",
)
# The same, under the name the 2026-07-28 server-stateless scenario probes
# (no log message without a logLevel in the request's _meta).
logging_tool = ChatAgent(
    "test_logging_tool",
    FunctionModel(_three_steps, name="three-steps"),
    tools=(step,),
    description="Runs three steps; each is logged.",
)

# The tasks scenarios' tool that takes no arguments: an agent that fails after
# a second (a client that declared MCP tasks gets it as a task that completes
# with an isError result). Their other tools take arguments (seconds, label,
# name) that an agent's tool schema (message, session_id) does not have.
failing_job = fixture(
    "failing_job",
    Answer(pieces=("working", "..."), gap=1.0, fail="This job always fails"),
    "Fails after a second.",
)


# Typed arguments (agents.yaml: mcp.input_schema) reach an agent as a data part.


def arguments_of(input: list[Message]) -> dict[str, Any]:
    """The tool arguments of the call: the data part of its user message."""
    for message in reversed(input):
        for part in message.parts:
            if isinstance(part, DataPart) and isinstance(part.data, dict):
                return part.data
    return {}


class ArgumentsAgent(BaseAgent):
    """Answers from its tool arguments: ``answer(arguments)``, after ``seconds`` if given."""

    def __init__(
        self, name: str, answer: Callable[[dict[str, Any]], str], description: str
    ) -> None:
        super().__init__(name, description)
        self.answer = answer

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        arguments = arguments_of(input)
        seconds = arguments.get("seconds")
        if isinstance(seconds, int | float) and seconds > 0:
            await anyio.sleep(seconds)
        text = self.answer(arguments)
        yield RunFinished(RunResult(text, [*input, Message.assistant(text)]))


greet = ArgumentsAgent("greet", lambda a: f"Hello, {a.get('name')}!", "Greets by name.")
slow_compute = ArgumentsAgent(
    "slow_compute",
    lambda a: f"computed {a.get('label')} after {a.get('seconds')} s",
    "Sleeps `seconds`, then answers with its label.",
)


def _crash(arguments: dict[str, Any]) -> str:
    raise RuntimeError("protocol_error_job crashed")  # not an agent failure: a server fault


protocol_error_job = ArgumentsAgent("protocol_error_job", _crash, "Crashes.")
json_schema_tool = ArgumentsAgent(
    "json_schema_2020_12_tool", lambda a: f"received {sorted(a)}", "Takes a rich schema."
)


class FormAgent(BaseAgent):
    """Asks its user with a form (``ask_user`` with a ``schema``), then reports the answer."""

    def __init__(
        self, name: str, form: dict[str, Any], reply: str, question: str, description: str
    ) -> None:
        super().__init__(name, description)
        self.form = form
        self.reply = reply
        self.question = question

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        last = input[-1]
        answers = [p for p in last.parts if isinstance(p, ToolResultPart)]
        if answers:  # the user's answer: {"action": ..., "content": ...}
            answer = orjson.loads(answers[0].content)
            text = self.reply.format(
                action=answer["action"], content=orjson.dumps(answer["content"]).decode()
            )
            yield RunFinished(RunResult(text, [*input, Message.assistant(text)]))
            return
        question = arguments_of(input).get("message") or self.question
        arguments = orjson.dumps({"question": question, "schema": self.form}).decode()
        call = ToolCallPart(id="form-1", name=ASK_USER.name, arguments=arguments)
        asked = Message(role="assistant", parts=[call])
        yield RunFinished(
            RunResult("", [*input, asked], finish_reason="tool_calls", pending=[call])
        )


elicitation = FormAgent(
    "test_elicitation",
    {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    },
    "User response: action={action}, content={content}",
    "Please provide your information",
    "Asks the user for a username and an email.",
)
elicitation_defaults = FormAgent(
    "test_elicitation_sep1034_defaults",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    },
    "Elicitation completed: action={action}, content={content}",
    "Please review and update the form fields with defaults",
    "Asks with a form whose fields have defaults.",
)
elicitation_enums = FormAgent(
    "test_elicitation_sep1330_enums",
    {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    },
    "Elicitation completed: action={action}, content={content}",
    "Please select options from the enum fields",
    "Asks with a form of every enum kind.",
)


def _field(name: str, kind: str = "string") -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": kind}}, "required": [name]}


class Interview(BaseAgent):
    """Asks its questions one round at a time (``ask_user`` with a form, the call id
    naming the question), then answers ``reply`` filled with the answers' contents."""

    def __init__(self, name: str, steps: list[tuple[str, str, dict[str, Any]]], reply: str) -> None:
        super().__init__(name, f"Asks {len(steps)} question(s) in turn.")
        self.steps = steps
        self.reply = reply

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        answered: dict[str, Any] = {}
        for message in [*history, *input]:
            for part in message.parts:
                if isinstance(part, ToolResultPart):
                    answered.update(orjson.loads(part.content).get("content") or {})
        asked = sum(isinstance(p, ToolResultPart) for m in [*history, *input] for p in m.parts)
        if asked >= len(self.steps):
            text = self.reply.format(**answered)
            yield RunFinished(RunResult(text, [*input, Message.assistant(text)]))
            return
        call_id, question, form = self.steps[asked]
        arguments = orjson.dumps({"question": question, "schema": form}).decode()
        call = ToolCallPart(id=call_id, name=ASK_USER.name, arguments=arguments)
        asked_message = Message(role="assistant", parts=[call])
        yield RunFinished(
            RunResult("", [*input, asked_message], finish_reason="tool_calls", pending=[call])
        )


input_required_elicitation = Interview(
    "test_input_required_result_elicitation",
    [("user_name", "What is your name?", _field("name"))],
    "Hello, {name}!",
)
input_required_state = Interview(
    "test_input_required_result_request_state",
    [("confirm", "Please confirm", _field("ok", "boolean"))],
    "state-ok: confirmed={ok}",
)
input_required_rounds = Interview(
    "test_input_required_result_multi_round",
    [
        ("step1", "Step 1: What is your name?", _field("name")),
        ("step2", "Step 2: What is your favorite color?", _field("color")),
    ],
    "{name} likes {color}",
)
input_required_tampered = Interview(
    "test_input_required_result_tampered_state",
    [("confirm", "Please confirm", _field("ok", "boolean"))],
    "confirmed={ok}",
)
input_required_capabilities = Interview(
    "test_input_required_result_capabilities",
    [("user_name", "What is your name?", _field("name"))],
    "Hello, {name}!",
)


class Questions(BaseAgent):
    """Asks all its questions at once (``ask_user`` with forms, the call ids naming
    them, ``{argument}`` filled in), then works ``work`` seconds and answers
    ``reply`` filled with the tool arguments and the answers' contents."""

    def __init__(
        self,
        name: str,
        questions: list[tuple[str, str, dict[str, Any]]],
        reply: str,
        work: float = 0.0,
    ) -> None:
        super().__init__(name, f"Asks {len(questions)} question(s) at once, then answers.")
        self.questions = questions
        self.reply = reply
        self.work = work

    async def _run(
        self, history: list[Message], input: list[Message], options: RunOptions, *, stream: bool
    ) -> AsyncIterator[RunUpdate]:
        arguments = arguments_of([*history, *input])
        ids = {call_id for call_id, _, _ in self.questions}
        answers: dict[str, Any] = {}
        answered = set()
        for message in [*history, *input]:
            for part in message.parts:
                if isinstance(part, ToolResultPart) and part.call_id in ids:
                    answered.add(part.call_id)
                    answers.update(orjson.loads(part.content).get("content") or {})
        if answered < ids:
            calls = [
                ToolCallPart(
                    id=call_id,
                    name=ASK_USER.name,
                    arguments=orjson.dumps(
                        {"question": question.format(**arguments), "schema": form}
                    ).decode(),
                )
                for call_id, question, form in self.questions
                if call_id not in answered
            ]
            asked = Message(role="assistant", parts=list(calls))
            yield RunFinished(
                RunResult("", [*input, asked], finish_reason="tool_calls", pending=calls)
            )
            return
        if self.work:
            await anyio.sleep(self.work)
        text = self.reply.format(**arguments, **answers)
        yield RunFinished(RunResult(text, [*input, Message.assistant(text)]))


# The tasks scenarios' questions: a task waits for its answers (input_required).
confirm_delete = Questions(
    "confirm_delete",
    [("confirm", "Delete {filename}?", _field("confirm", "boolean"))],
    "{filename}: confirm={confirm}",
)
multi_input = Questions(
    "multi_input",
    [
        ("name", "What is your name?", _field("name")),
        ("confirm", "Please confirm", _field("confirm", "boolean")),
    ],
    "{name}: confirm={confirm}",
)
# Asks first (answered in the call: input-required rounds), then works long
# enough to become a task (mcp.task_after in agents.yaml).
tool_with_task = Questions(
    "test_tool_with_task",
    [("user_name", "What is your name?", _field("name"))],
    "Hello, {name}!",
    work=2.0,
)
