"""The agents' config file, as validated pydantic specs.

``config/agents.schema.json`` is generated from :class:`ConfigSpec`
(``agenthost schema``) for editor completion.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, SecretStr, Tag

from app.settings import AdapterName


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSettingsSpec(_Spec):
    """Connection and sampling settings of an agent's model."""

    base_url: str | None = Field(
        None, description="OpenAI-compatible base URL, e.g. http://localhost:11434/v1."
    )
    api_key: SecretStr | None = Field(
        None, description="Upstream key; use ${VAR} to read it from the environment."
    )
    timeout: float = Field(60.0, gt=0, description="Seconds per upstream request.")
    max_retries: int = Field(
        2, ge=0, description="Upstream retries on connection errors, 429 and 5xx."
    )
    context_size: int = Field(
        4096, ge=256, description="local models: tokens of context per parallel request."
    )
    parallel: int = Field(2, ge=1, le=16, description="local models: requests decoded at once.")
    threads: int = Field(1, ge=1, le=64, description="local models: CPU threads.")
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, gt=0)
    seed: int | None = None
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    stop: list[str] | None = None


Allow = Field(
    None,
    description="Principals (API key names) that may see and use this agent; "
    "unset means every caller. Others get 404, as for an unknown agent.",
)


Expose = Field(
    None,
    description="Protocols (adapter names: openai, a2a, mcp, acp, ...) that serve this "
    "agent; unset means every enabled protocol.",
)


class LimitsSpec(_Spec):
    """Bounds on each run of an agent; unset ones come from the server's settings."""

    max_output_chars: int | None = Field(
        None, ge=1, description="Characters of one answer (AGENTHOST_MAX_OUTPUT_CHARS)."
    )
    max_seconds: float | None = Field(
        None, gt=0, description="Seconds one run may take (AGENTHOST_MAX_RUN_SECONDS)."
    )


class ChatAgentSpec(_Spec):
    """An agent driven by a chat model (the default kind)."""

    kind: Literal["chat"] = "chat"
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    description: str = ""
    model: str = Field(
        description="'echo', 'openai:<model>' (any OpenAI-compatible server) "
        "or 'local:<name-or-path>'.",
        examples=["echo", "openai:gpt-4o-mini", "local:smollm2"],
    )
    model_settings: ModelSettingsSpec = Field(default_factory=ModelSettingsSpec)
    instructions: str | None = None
    tools: list[str] = Field(
        default_factory=list,
        description="Built-in tool names: calculator, current_time, ask_user "
        "(asks the user and waits for the answer).",
    )
    max_steps: int = Field(10, ge=1, le=100, description="Model calls per run, at most.")
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    allow: list[str] | None = Allow
    expose: list[AdapterName] | None = Expose


class ImportAgentSpec(_Spec):
    """An agent object from code: ``package.module:attribute``."""

    kind: Literal["import"] = "import"
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    description: str = ""
    import_: str = Field(alias="import", pattern=r"^[\w.]+:[\w.]+$")
    allow: list[str] | None = Allow
    expose: list[AdapterName] | None = Expose

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "import" if "import" in value else str(value.get("kind", "chat"))
    return str(getattr(value, "kind", "chat"))


AgentSpec = Annotated[
    Annotated[ChatAgentSpec, Tag("chat")] | Annotated[ImportAgentSpec, Tag("import")],
    Discriminator(_kind),
]


class ConfigSpec(_Spec):
    """The whole config file."""

    agents: list[AgentSpec] = Field(min_length=1)
