"""Run options: agent defaults merged with per-run options.

Every field is optional; ``None`` means "not set", so merging keeps the
agent's value unless the run sets one. Instructions concatenate and tools
merge (a duplicate tool name is an error).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from agenthost.agents.errors import UserError
from agenthost.agents.tools.base import BaseTool
from agenthost.agents.tools.client import ClientTool

AnyTool = BaseTool | ClientTool
"""A tool the runtime runs, or one the client answers."""

ToolChoice = Literal["auto", "none", "required"] | str
"""``auto``, ``none``, ``required``, or the name of the one tool the model must call."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Sampling settings passed to the chat model; ``None`` means the model's default."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    # An OpenAI-style response_format dict ({"type": "json_object"} ...).
    response_format: dict[str, Any] | None = None
    tool_choice: ToolChoice | None = None
    parallel_tool_calls: bool | None = None
    # How hard a reasoning model thinks ("low", "medium", "high"...): sent as
    # ``reasoning_effort`` by a model that relays to an upstream (``openai:``);
    # models that do not reason apart (echo, scripted, local) ignore it.
    reasoning_effort: str | None = None
    # Chat Completions parameters an OpenAI-compatible upstream understands
    # (``user``, ``verbosity``, ...): the ``openai:`` provider sends
    # them as they are; other models ignore them (adapters refuse what would
    # change an answer for an agent whose model cannot relay it).
    upstream_params: dict[str, Any] | None = None

    def merged(self, override: ModelSettings | None) -> ModelSettings:
        if override is None:
            return self
        changes = {
            name: value for name in self.__slots__ if (value := getattr(override, name)) is not None
        }
        return replace(self, **changes) if changes else self


@dataclass(frozen=True, slots=True)
class RunOptions:
    """Options for one run; the agent's own options are the defaults."""

    instructions: str | None = None
    tools: Sequence[AnyTool] | None = None
    model_settings: ModelSettings | None = None
    max_steps: int | None = None
    # False where the protocol has no way to ask its client and resume (OpenAI
    # Responses): a call that needs approval is refused at once, as without a session.
    can_ask: bool = True

    def merged(self, override: RunOptions | None) -> RunOptions:
        if override is None:
            return self
        return RunOptions(
            instructions=_join(self.instructions, override.instructions),
            tools=merge_tools(self.tools or (), override.tools or ()),
            model_settings=(self.model_settings or ModelSettings()).merged(override.model_settings),
            max_steps=override.max_steps if override.max_steps is not None else self.max_steps,
            can_ask=self.can_ask and override.can_ask,
        )


def _join(first: str | None, second: str | None) -> str | None:
    parts = [text for text in (first, second) if text]
    return "\n\n".join(parts) if parts else None


def merge_tools(*groups: Sequence[AnyTool]) -> tuple[AnyTool, ...]:
    """All tools of all groups, in order; refuses a name seen twice."""
    seen: dict[str, AnyTool] = {}
    for group in groups:
        for tool in group:
            if tool.name in seen:
                raise UserError(f"duplicate tool name {tool.name!r}", param="tools")
            seen[tool.name] = tool
    return tuple(seen.values())
