"""The events and answers watsonx Orchestrate reads from an external agent, as models.

Written from the external-agent spec (``external_agent/spec.yaml`` and
``external_agent/README.md`` of IBM's watsonx-orchestrate-developer-toolkit)
and the step-detail models of the ADK's validator
(``agentops.external_agent.types`` in ``ibm-watsonx-orchestrate-evaluation-framework``,
the ``agentops`` extra of ``ibm-watsonx-orchestrate``, which ``orchestrate
evaluations validate-external`` runs). That package cannot share agenthost's
lock (it pins langchain, pandas and OpenTelemetry ≤1.39), so the suite keeps
these models, stricter than the validator's (which reads ``choices`` as any
dict); the validator itself runs against a served agent in
``test_adk_validator.py`` when its venv is there.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ThinkingStepDetails(_Strict):
    type: Literal["thinking"]
    content: str


class ToolCall(_Strict):
    name: str
    args: dict[str, Any]
    id: str


class ToolCallsStepDetails(_Strict):
    type: Literal["tool_calls"]
    tool_calls: list[ToolCall]


class ToolResponseStepDetails(_Strict):
    type: Literal["tool_response"]
    content: str
    name: str
    tool_call_id: str


StepDetails = Annotated[
    ThinkingStepDetails | ToolCallsStepDetails | ToolResponseStepDetails,
    Field(discriminator="type"),
]


class MessageDelta(_Strict):
    role: Literal["assistant"]
    content: str


class StepDelta(_Strict):
    role: Literal["assistant"]
    step_details: StepDetails


class MessageChoice(_Strict):
    delta: MessageDelta


class StepChoice(_Strict):
    delta: StepDelta


class _Event(_Strict):
    id: str
    thread_id: str | None
    model: str
    created: int


class ThreadMessageDelta(_Event):
    object: Literal["thread.message.delta"]
    choices: list[MessageChoice]


class ThreadRunStepDelta(_Event):
    object: Literal["thread.run.step.delta"]
    choices: list[StepChoice]


Event = Annotated[ThreadMessageDelta | ThreadRunStepDelta, Field(discriminator="object")]
EVENT: TypeAdapter[ThreadMessageDelta | ThreadRunStepDelta] = TypeAdapter(Event)


class AnswerMessage(_Strict):
    role: Literal["assistant"]
    content: str


class Choice(_Strict):
    index: int
    message: AnswerMessage
    finish_reason: str | None


class ChatCompletion(BaseModel):
    """The non-streamed answer (``usage`` and ``thread_id`` beside the spec's fields)."""

    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[Choice] = Field(min_length=1)


def parse_stream(raw: bytes) -> list[ThreadMessageDelta | ThreadRunStepDelta]:
    """Every event of an answer (``data:`` lines only, as the ADK's validator needs them);
    the stream ends with ``data: [DONE]``."""
    blocks = [b for b in raw.replace(b"\r\n", b"\n").split(b"\n\n") if b.strip()]
    blocks = [b for b in blocks if not b.startswith(b":")]  # keep-alive comments
    assert blocks and blocks[-1] == b"data: [DONE]", blocks[-1:]
    events = []
    for block in blocks[:-1]:
        assert block.startswith(b"data: ") and b"\n" not in block, block
        events.append(EVENT.validate_json(block.removeprefix(b"data: ")))
    return events


def text_of(events: list[ThreadMessageDelta | ThreadRunStepDelta]) -> str:
    return "".join(e.choices[0].delta.content for e in events if isinstance(e, ThreadMessageDelta))


def steps_of(events: list[ThreadMessageDelta | ThreadRunStepDelta]) -> list[Any]:
    return [e.choices[0].delta.step_details for e in events if isinstance(e, ThreadRunStepDelta)]
