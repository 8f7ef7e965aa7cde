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
