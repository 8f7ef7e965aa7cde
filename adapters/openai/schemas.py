"""Request bodies of the OpenAI-compatible endpoints.

Unknown fields are accepted and ignored (clients send many optional ones);
the fields that change what an answer means and that an agent cannot
honour are checked explicitly and refused with a 400 naming the param.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Body(BaseModel):
    model_config = ConfigDict(extra="allow")


class StreamOptions(_Body):
    include_usage: bool = False


class FunctionCall(_Body):
    name: str
    arguments: str = "{}"


class ChatToolCall(_Body):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatContentPart(_Body):
    type: str
    text: str | None = None
    image_url: dict[str, Any] | None = None


class ChatMessage(_Body):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ChatContentPart] | None = None
    name: str | None = None
    tool_calls: list[ChatToolCall] | None = None
    tool_call_id: str | None = None


class ChatCompletionRequest(_Body):
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    n: int | None = Field(None, ge=1)
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    logprobs: bool | None = None


class ResponseContentPart(_Body):
    type: str
    text: str | None = None
    image_url: str | None = None
    file_url: str | None = None
    file_data: str | None = None
    filename: str | None = None


class ResponseInputItem(_Body):
    type: str = "message"
    role: Literal["system", "developer", "user", "assistant"] | None = None
    content: str | list[ResponseContentPart] | None = None
    # function_call / function_call_output items
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    output: str | None = None


class ConversationRef(_Body):
    id: str


class ResponseTextFormat(_Body):
    type: str = "text"


class ResponseText(_Body):
    format: ResponseTextFormat | None = None


class ResponseRequest(_Body):
    model: str
    input: str | list[ResponseInputItem]
    instructions: str | None = None
    previous_response_id: str | None = None
    conversation: str | ConversationRef | None = None
    store: bool = True
    stream: bool = False
    background: bool | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_output_tokens: int | None = Field(None, ge=1)
    tools: list[dict[str, Any]] | None = None
    text: ResponseText | None = None
    metadata: dict[str, str] | None = None
