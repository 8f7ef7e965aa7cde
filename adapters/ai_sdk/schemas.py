"""The body ``useChat``'s ``DefaultChatTransport`` sends: ``id``, ``messages`` (``UIMessage``
s with parts), ``trigger``, ``messageId``; anything else the app adds is kept, unread."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Approval(BaseModel):
    """A tool part's ``approval`` (``ai`` 6+): the request's ``id`` and, once the user
    answered (``addToolApprovalResponse``), ``approved`` and an optional ``reason``."""

    model_config = ConfigDict(extra="allow")

    id: str
    approved: bool | None = None
    reason: str | None = None


class UIPart(BaseModel):
    """One part of a ``UIMessage``: ``text``, ``reasoning``, ``tool-NAME``, ``dynamic-tool``,
    ``step-start``, ``file``, ``source-*``, ``data-*``…"""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None
    tool_call_id: str | None = Field(None, alias="toolCallId")
    tool_name: str | None = Field(None, alias="toolName")
    state: str | None = None
    input: Any = None
    output: Any = None
    error_text: str | None = Field(None, alias="errorText")
    approval: Approval | None = None


class UIMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    role: Literal["system", "user", "assistant"]
    parts: list[UIPart] = Field(min_length=1)


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    messages: list[UIMessage] = Field(min_length=1)
    trigger: str | None = None
    message_id: str | None = Field(None, alias="messageId")
