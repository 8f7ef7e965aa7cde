"""The agents' config file, as validated pydantic specs.

``config/agents.schema.json`` is generated from :class:`ConfigSpec`
(``agenthost schema``) for editor completion. The sections a protocol owns
(an agent's ``a2a:``, ``mcp:``; the top-level ``mcp:``) are its adapter
package's models (``AgentOptions``, ``ConfigSection``), added here from the
:data:`~agenthost.app.protocols.ADAPTERS` table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, SecretStr, Tag, create_model

from agenthost.app.compose_specs import (
    InstructionsSpec,
    MemorySpec,
    TemplateSpec,
    UnconstrainedSpec,
    WorkflowStepSpec,
)
from agenthost.app.protocols import ADAPTERS, ProtocolName, package
from agenthost.app.tool_specs import (
    MCPServerName,
    MCPServersField,
    MCPServerSpec,
    ToolEntry,
    ToolsField,
)


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


AGENT_OPTIONS: dict[str, type[BaseModel]] = {
    name: options for name in ADAPTERS if (options := package(name).AgentOptions) is not None
}
"""Protocol → the model of an agent's ``<protocol>:`` section."""

CONFIG_SECTIONS: dict[str, type[BaseModel]] = {
    name: section for name in ADAPTERS if (section := package(name).ConfigSection) is not None
}
"""Protocol → the model of the config file's top-level ``<protocol>:`` section."""


def _sections(models: dict[str, type[BaseModel]]) -> dict[str, Any]:
    return {
        name: (model, Field(default_factory=model, description=_summary(model)))
        for name, model in models.items()
    }


def _summary(model: type[BaseModel]) -> str:
    return (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")


if TYPE_CHECKING:  # the fields are known at run time only; code reads them by protocol name
    _AgentBase = _Spec
    _ConfigBase = _Spec
else:
    _AgentBase = create_model("_AgentBase", __base__=_Spec, **_sections(AGENT_OPTIONS))
    _ConfigBase = create_model("_ConfigBase", __base__=_Spec, **_sections(CONFIG_SECTIONS))


def protocol_options(spec: BaseModel) -> dict[str, BaseModel]:
    """An agent spec's per-protocol options, by protocol."""
    return {name: getattr(spec, name) for name in AGENT_OPTIONS}


def config_sections(config: BaseModel) -> dict[str, BaseModel]:
    """A config's top-level protocol sections, by protocol."""
    return {name: getattr(config, name) for name in CONFIG_SECTIONS}


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
    description="Principals (API key names; with OIDC tokens, also oidc:SUB and scope:NAME) "
    "that may see and use this agent; "
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


class SkillSpec(_Spec):
    """One thing the agent is good at, advertised to clients (A2A agent cards)."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    name: str | None = Field(None, description="Display name; the id when unset.")
    description: str
    tags: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list, description="Example requests.")


Skills = Field(
    None,
    description="What the agent can do, for A2A agent cards; unset: one skill made from "
    "the description.",
)


SessionsField = Field(
    None,
    description="'shared': this agent's conversations are one namespace on every protocol "
    "(a conversation started over one protocol continues over another); 'isolated': each "
    "protocol keeps its own; unset: AGENTHOST_SESSIONS.",
)
SessionsMode = Literal["isolated", "shared"] | None
DurableField = Field(
    True,
    description="Whether a detached run of this agent (a background Response, an A2A, MCP "
    "or IBM ACP task) whose replica died is resumed on another replica from its last finished "
    "step (true), or failed with a retryable error (false: an agent whose state cannot be "
    "rebuilt from its messages). See docs/durable-runs.md.",
)


class ChatAgentSpec(_AgentBase):
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
    instructions: str | InstructionsSpec | None = Field(
        None,
        description="The system prompt: plain text, or {template: NAME, variables: {...}} / "
        "{text: JINJA, variables: {...}} for a prompt template.",
    )
    tools: list[ToolEntry] = ToolsField
    max_steps: int = Field(10, ge=1, le=100, description="Model calls per run, at most.")
    limits: LimitsSpec = Field(default_factory=LimitsSpec)
    allow: list[str] | None = Allow
    expose: list[ProtocolName] | None = Expose
    skills: list[SkillSpec] | None = Skills
    sessions: SessionsMode = SessionsField
    durable: bool = DurableField
    # Composition (memory, handoff) ---------------------------------------
    memory: MemorySpec = Field(
        default_factory=UnconstrainedSpec,
        description="What of the conversation the model sees: unconstrained, sliding_window, "
        "token_budget or summarize (the session always keeps everything).",
    )
    agents: list[str] = Field(
        default_factory=list,
        description="Other agents of this config this agent may hand tasks to (each is a tool).",
    )

    @property
    def source(self) -> str:
        """Where the agent comes from, for listings."""
        return self.model


class ImportAgentSpec(_AgentBase):
    """An agent object from code: ``package.module:attribute``."""

    kind: Literal["import"] = "import"
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    description: str = ""
    import_: str = Field(alias="import", pattern=r"^[\w.]+:[\w.]+$")
    allow: list[str] | None = Allow
    expose: list[ProtocolName] | None = Expose
    skills: list[SkillSpec] | None = Skills
    sessions: SessionsMode = SessionsField
    durable: bool = DurableField

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @property
    def source(self) -> str:
        return self.import_


# Composition kinds ---------------------------------------------------------


class PipelineAgentSpec(_AgentBase):
    """Agents in a row: each step works on the previous step's answer."""

    kind: Literal["pipeline"]
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    description: str = ""
    steps: list[str] = Field(min_length=1, description="Agents of this config, in order.")
    allow: list[str] | None = Allow
    expose: list[ProtocolName] | None = Expose
    skills: list[SkillSpec] | None = Skills
    sessions: SessionsMode = SessionsField
    durable: bool = DurableField

    @property
    def source(self) -> str:
        return "pipeline: " + " -> ".join(self.steps)


class WorkflowAgentSpec(_AgentBase):
    """A state machine over a pydantic state from code; steps are functions or agents."""

    kind: Literal["workflow"]
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    description: str = ""
    state: str = Field(pattern=r"^[\w.]+:[\w.]+$", description="package.module:Model (pydantic).")
    steps: list[WorkflowStepSpec] = Field(min_length=1)
    input: str = Field("input", description="State field the run's input text starts in.")
    output: str = Field("output", description="State field whose value is the answer at END.")
    max_steps: int = Field(50, ge=1, le=10_000, description="Steps per run, at most.")
    allow: list[str] | None = Allow
    expose: list[ProtocolName] | None = Expose
    skills: list[SkillSpec] | None = Skills
    sessions: SessionsMode = SessionsField
    durable: bool = DurableField

    @property
    def source(self) -> str:
        return f"workflow over {self.state}"


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "import" if "import" in value else str(value.get("kind", "chat"))
    return str(getattr(value, "kind", "chat"))


AgentSpec = Annotated[
    Annotated[ChatAgentSpec, Tag("chat")]
    | Annotated[ImportAgentSpec, Tag("import")]
    | Annotated[PipelineAgentSpec, Tag("pipeline")]
    | Annotated[WorkflowAgentSpec, Tag("workflow")],
    Discriminator(_kind),
]
AGENT_KINDS = ("chat", "import", "pipeline", "workflow")


class ConfigSpec(_ConfigBase):
    """The whole config file."""

    agents: list[AgentSpec] = Field(min_length=1)
    mcp_servers: dict[MCPServerName, MCPServerSpec] = MCPServersField
    templates: dict[str, TemplateSpec] = Field(
        default_factory=dict, description="The prompt template library agents refer to by name."
    )
