"""The AI SDK adapter's settings (``AGENTHOST_AI_SDK_…``)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """The AI SDK UI message stream's settings."""

    model_config = SettingsConfigDict(env_prefix="AGENTHOST_AI_SDK_", extra="forbid")

    approvals: bool = Field(
        True,
        description="Ask for a tool approval with the `tool-approval-request` chunk (`ai` 6 "
        "and later): the chat waits, kept on the server, until the user answers. `false` "
        "refuses such calls at once (the model is told), for `ai` 5 front ends, which do "
        "not know the chunk.",
    )
    resume: bool = Field(
        False,
        description="Resumable streams (`useChat({resume: true})`): a request that names its "
        "chat runs as a durable run that outlives its connection, and "
        "`GET /ai-sdk/{agent}/{chatId}/stream` replays it from its start and follows it, on "
        "any replica. A client's abort (`stop()`) then no longer stops the run, as with the "
        "AI SDK's own resumable streams; off, a dropped request stops its run.",
    )
