"""Runtime tools: a name, a description, an input schema and one run pipeline.

:class:`BaseTool` is what every tool the runtime runs has in common (function
tools, MCP tools, ``http_get``): per-tool :class:`ToolOptions` and
:meth:`BaseTool.run`, which sends every call through
:func:`agents.tools.pipeline.run_pipeline` — no tool can skip it.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import orjson

from agenthost.agents.errors import ToolError
from agenthost.agents.tools.cache import CacheOptions, ToolCache

if TYPE_CHECKING:
    from agenthost.agents.tools.events import ToolHooks


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """What a chat model is told about a tool."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """How the pipeline runs one tool.

    ``retries`` extra attempts after a failure (never after a
    :class:`~agents.errors.FatalToolError` or invalid input), waiting
    ``backoff`` seconds before the first retry and twice as long before each
    next one (at most ``max_backoff``); ``timeout`` seconds per attempt;
    ``cache`` keeps results (off when None); with ``approval`` a call runs only once
    the user approves it (:mod:`agents.tools.approvals`).
    """

    retries: int = 0
    backoff: float = 0.5
    max_backoff: float = 10.0
    timeout: float | None = None
    cache: CacheOptions | None = None
    approval: bool = False

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retrying after failed attempt number ``attempt``."""
        return float(min(self.backoff * 2 ** (attempt - 1), self.max_backoff))


class BaseTool(ABC):
    """A tool the runtime runs; subclasses say how to validate and invoke it."""

    name: str
    description: str

    def __init__(
        self,
        name: str,
        description: str,
        *,
        options: ToolOptions | None = None,
        hooks: Sequence[ToolHooks] = (),
    ) -> None:
        self.name = name
        self.description = description
        self.options = options or ToolOptions()
        self.hooks = tuple(hooks)
        self.cache = ToolCache(self.options.cache) if self.options.cache else None

    @property
    @abstractmethod
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the input, as the model sees it."""

    @property
    def definition(self) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, self.parameters)

    @abstractmethod
    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check parsed arguments; raise ToolError naming each bad field."""

    @abstractmethod
    async def invoke(self, arguments: dict[str, Any]) -> Any:
        """Run once with validated arguments; any non-text result is sent as JSON."""

    async def run(
        self, arguments: str, *, call_id: str = "", hooks: Sequence[ToolHooks] = ()
    ) -> str:
        """Validate, run through the pipeline and return the result as text.

        Raises :class:`~agents.errors.ToolError` with a message for the model.
        """
        from agenthost.agents.tools.pipeline import run_pipeline

        return await run_pipeline(self, arguments, call_id=call_id, hooks=hooks)

    def parse(self, arguments: str) -> dict[str, Any]:
        """JSON arguments → validated arguments."""
        try:
            raw = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            raise ToolError(f"arguments of {self.name} are not valid JSON: {exc}") from exc
        if not isinstance(raw, dict):
            raise ToolError(f"arguments of {self.name} must be a JSON object")
        return self.validate(raw)

    def with_options(
        self,
        options: ToolOptions | None = None,
        *,
        name: str | None = None,
        hooks: Sequence[ToolHooks] | None = None,
    ) -> Self:
        """A copy with other options (and a cache of its own), name or hooks."""
        clone = copy.copy(self)
        clone.options = options if options is not None else self.options
        clone.cache = ToolCache(clone.options.cache) if clone.options.cache else None
        clone.name = name or self.name
        clone.hooks = tuple(hooks) if hooks is not None else self.hooks
        return clone

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
