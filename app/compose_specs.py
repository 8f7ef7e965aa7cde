"""Config specs for memory strategies, prompt templates and workflow steps.

Kept apart from :mod:`app.specs` (which holds the agent kinds) so that each
concept stays small; the agent specs refer to these.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

_AGENT_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_IMPORT_PATH = r"^[\w.]+:[\w.]+$"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UnconstrainedSpec(_Spec):
    """The model sees the whole conversation (the default)."""

    strategy: Literal["unconstrained"] = "unconstrained"


class SlidingWindowSpec(_Spec):
    """The model sees the instructions and the last ``max_messages`` messages."""

    strategy: Literal["sliding_window"]
    max_messages: int = Field(20, ge=1, description="Messages kept, instructions not counted.")


class TokenBudgetSpec(_Spec):
    """The model sees the newest messages that fit ``threshold * max_tokens`` tokens."""

    strategy: Literal["token_budget"]
    max_tokens: int = Field(ge=16, description="The context the conversation may use, in tokens.")
    threshold: float = Field(
        0.75, gt=0, le=1, description="Fraction of max_tokens to fill (the rest is for the answer)."
    )


class SummarizeSpec(_Spec):
    """Over the budget, older messages are condensed by a model into one summary."""

    strategy: Literal["summarize"]
    max_tokens: int = Field(ge=16, description="The context the conversation may use, in tokens.")
    threshold: float = Field(0.75, gt=0, le=1, description="Fraction of max_tokens to fill.")
    keep_last: int = Field(6, ge=1, description="Newest messages always kept word for word.")
    model: str | None = Field(
        None,
        description="The model that summarises ('echo', 'openai:<model>', 'local:<name>'), with "
        "the agent's model_settings; unset means the agent's own model.",
    )


def _strategy_name(value: Any) -> Any:
    return {"strategy": value} if isinstance(value, str) else value


MemorySpec = Annotated[
    UnconstrainedSpec | SlidingWindowSpec | TokenBudgetSpec | SummarizeSpec,
    Field(discriminator="strategy"),
    BeforeValidator(_strategy_name),
]


class TemplateSpec(_Spec):
    """A prompt template of the config's library (Jinja2, rendered in a sandbox)."""

    text: str = Field(description="Jinja2 text; computed: now, today, agent, tools.")
    variables: dict[str, Any] = Field(
        default_factory=dict,
        description="Declared variables and their defaults; null means every agent must give one.",
    )


class InstructionsSpec(_Spec):
    """Instructions from a template: a library one (``template``) or an inline one (``text``)."""

    template: str | None = Field(None, description="Name of a template under `templates`.")
    text: str | None = Field(
        None, description="An inline template; `variables` declares its names."
    )
    variables: dict[str, Any] = Field(default_factory=dict, description="Values for this agent.")

    @model_validator(mode="after")
    def _one_source(self) -> InstructionsSpec:
        if (self.template is None) == (self.text is None):
            raise ValueError("give exactly one of template (a library name) or text")
        return self


class WorkflowStepSpec(_Spec):
    """One workflow step: a Python function or an agent of this config."""

    name: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$")
    function: str | None = Field(
        None,
        pattern=_IMPORT_PATH,
        description="package.module:function taking the state; returns the next step's name "
        "or NEXT, SELF, PREV, START, END (None = NEXT).",
    )
    agent: str | None = Field(None, pattern=_AGENT_NAME, description="An agent of this config.")
    input: str | None = Field(None, description="agent steps: state field read as the task.")
    output: str | None = Field(None, description="agent steps: state field the answer goes to.")
    next: str = Field("NEXT", description="agent steps: where to go after it.")

    @model_validator(mode="after")
    def _one_kind(self) -> WorkflowStepSpec:
        if (self.function is None) == (self.agent is None):
            raise ValueError("give exactly one of function or agent")
        if self.agent is not None and self.output is None:
            raise ValueError("an agent step needs output (the state field for its answer)")
        return self
