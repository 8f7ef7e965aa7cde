"""Request bodies of the OpenAI-compatible endpoints.

Parsed strictly: a number must be a JSON number and a flag a JSON boolean
(``"max_tokens": "10"`` is a 400, as with OpenAI). Unknown fields are
accepted and ignored (clients send many optional ones); the fields that
change what an answer means and that an agent cannot honour are checked
explicitly and refused with a 400 naming the param. Every number has
bounds, so nothing out of range reaches a model.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

INT32 = 2**31 - 1  # what model servers take for a token count
INT64 = 2**63 - 1

MaxTokens = Annotated[int, Field(ge=1, le=INT32)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class StreamOptions(_Body):
    include_usage: bool = False


class FunctionCall(_Body):
    name: str
    arguments: str = "{}"


class ChatToolCall(_Body):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ImageURL(_Body):
    url: str
    detail: str | None = None


class InputAudio(_Body):
    data: str
    format: str


class InputFile(_Body):
    file_data: str | None = None
    file_id: str | None = None
    filename: str | None = None


class ChatContentPart(_Body):
    type: Literal["text", "image_url", "input_audio", "file", "refusal"]
    text: str | None = None
    image_url: ImageURL | None = None
    input_audio: InputAudio | None = None
    file: InputFile | None = None
    refusal: str | None = None


class ChatMessage(_Body):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ChatContentPart] | None = None
    name: str | None = None
    tool_calls: list[ChatToolCall] | None = None
    tool_call_id: str | None = None


class FunctionDefinition(_Body):
    name: str = Field(min_length=1, max_length=64, pattern=r"^[a-zA-Z0-9_-]+$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class ChatTool(_Body):
    type: str
    function: FunctionDefinition | None = None


class ChatCompletionRequest(_Body):
    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: MaxTokens | None = None
    max_completion_tokens: MaxTokens | None = None
    stop: str | list[str] | None = None
    seed: int | None = Field(None, ge=-INT64 - 1, le=INT64)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    n: int | None = Field(None, ge=1, le=128)
    tools: list[ChatTool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    response_format: dict[str, Any] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    # Relayed or refused: see adapters/openai/passthrough.py.
    user: str | None = None
    safety_identifier: str | None = None
    prompt_cache_key: str | None = None
    metadata: dict[str, str] | None = None
    store: bool | None = None
    service_tier: str | None = None
    reasoning_effort: str | None = None
    verbosity: str | None = None
    logit_bias: dict[str, int] | None = None
    prediction: dict[str, Any] | None = None
    web_search_options: dict[str, Any] | None = None
    modalities: list[str] | None = None
    audio: dict[str, Any] | None = None


class ResponseContentPart(_Body):
    type: Literal[
        "input_text", "output_text", "input_image", "input_file", "input_audio", "refusal"
    ]
    text: str | None = None
    image_url: str | None = None
    file_id: str | None = None
    file_url: str | None = None
    file_data: str | None = None
    filename: str | None = None
    input_audio: InputAudio | None = None
    refusal: str | None = None


class ResponseInputItem(_Body):
    type: Literal["message", "function_call", "function_call_output", "item_reference"] = "message"
    id: str | None = None
    role: Literal["system", "developer", "user", "assistant"] | None = None
    content: str | list[ResponseContentPart] | None = None
    # An assistant message's label (commentary or final_answer): kept as sent.
    phase: str | None = None
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
    verbosity: str | None = None


class Reasoning(_Body):
    effort: str | None = None
    summary: str | None = None
    generate_summary: str | None = None


class ResponseTool(_Body):
    type: str
    name: str | None = Field(None, min_length=1, max_length=64, pattern=r"^[a-zA-Z0-9_-]+$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


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
    max_output_tokens: MaxTokens | None = None
    tools: list[ResponseTool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    text: ResponseText | None = None
    metadata: dict[str, str] | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    # Relayed or refused: see adapters/openai/passthrough.py.
    user: str | None = None
    safety_identifier: str | None = None
    prompt_cache_key: str | None = None
    service_tier: str | None = None
    reasoning: Reasoning | None = None
    truncation: str | None = None
    max_tool_calls: int | None = Field(None, ge=1, le=INT32)
    include: list[str] | None = None
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)


# OpenAI's limits: 16 pairs, keys up to 64 characters, values up to 512.
Metadata = Annotated[
    dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=512)]],
    Field(max_length=16),
]


class ConversationCreate(_Body):
    items: list[ResponseInputItem] | None = Field(None, max_length=20)
    metadata: Metadata | None = None


class ConversationUpdate(_Body):
    metadata: Metadata


class ItemsCreate(_Body):
    items: list[ResponseInputItem] = Field(min_length=1, max_length=20)
