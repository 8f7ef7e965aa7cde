"""Prompt templates: instructions written in Jinja2, rendered in a sandbox for every run.

A template declares its variables (name → default; no default means the
agent must give a value). Besides them it may use computed values: ``now``
(the current UTC datetime), ``today`` (its ISO date), ``agent`` (the agent's
name) and ``tools`` (its tool names). Using an undeclared name, or leaving
a declared one without a value, is an error when the template is made or
customised (at start-up), never a blank in a prompt. Templates are
immutable: :meth:`PromptTemplate.customise` returns a new one, so one
agent's values never change another agent's template.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

COMPUTED = frozenset({"now", "today", "agent", "tools"})


@functools.cache
def _environment() -> ImmutableSandboxedEnvironment:
    """Sandboxed and immutable: a template cannot reach Python internals or change its values.

    Made with the first template: a config without one never imports Jinja2.
    """
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    return ImmutableSandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
    )


class TemplateProblem(ValueError):
    """A template that cannot be rendered as configured."""


class PromptTemplate:
    """Instructions with declared variables; render with :meth:`render`."""

    def __init__(
        self,
        text: str,
        variables: Mapping[str, Any] | None = None,
        *,
        values: Mapping[str, Any] | None = None,
        name: str = "instructions",
    ) -> None:
        self.name = name
        self.text = text
        self.variables = MappingProxyType(dict(variables or {}))
        """Declared variables and their defaults (``None``: a value must be given)."""
        self.values = MappingProxyType(dict(values or {}))
        from jinja2 import TemplateError, meta

        environment = _environment()
        try:
            parsed = environment.parse(text)
            self._template = environment.from_string(parsed)
        except TemplateError as exc:
            raise TemplateProblem(f"template {name!r}: {exc}") from exc
        undeclared = meta.find_undeclared_variables(parsed) - COMPUTED - set(self.variables)
        if undeclared:
            raise TemplateProblem(
                f"template {name!r} uses undeclared variables: {', '.join(sorted(undeclared))}; "
                f"declare them under variables (computed: {', '.join(sorted(COMPUTED))})"
            )
        if unknown := set(self.values) - set(self.variables):
            raise TemplateProblem(
                f"template {name!r} has no variable {', '.join(sorted(unknown))}; "
                f"declared: {', '.join(self.variables) or 'none'}"
            )

    def customise(self, values: Mapping[str, Any]) -> PromptTemplate:
        """A copy with these values set; this template stays as it is."""
        return PromptTemplate(
            self.text, self.variables, values={**self.values, **values}, name=self.name
        )

    def check(self) -> None:
        """Refuse a template that a run could not render (missing values, bad expressions)."""
        missing = [
            n for n, default in self.variables.items() if default is None and n not in self.values
        ]
        if missing:
            raise TemplateProblem(f"template {self.name!r}: no value for {', '.join(missing)}")
        self.render(agent="agent", tools=[])

    def render(self, *, agent: str, tools: Sequence[str]) -> str:
        """The instructions for a run now."""
        now = dt.datetime.now(dt.UTC)
        context = {
            **{n: v for n, v in self.variables.items() if v is not None},
            **self.values,
            "now": now,
            "today": now.date().isoformat(),
            "agent": agent,
            "tools": list(tools),
        }
        from jinja2 import TemplateError

        try:
            return self._template.render(context)
        except TemplateError as exc:
            raise TemplateProblem(f"template {self.name!r}: {exc}") from exc
