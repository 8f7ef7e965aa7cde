"""``thinking`` and ``output_config.effort`` as the model's ``reasoning_effort``.

An agent's ``openai:`` model sends that setting upstream as Chat Completions'
``reasoning_effort``, so a client asking Claude to think harder or less asks
the upstream model the same. The mapping:

- ``output_config.effort`` ``low``, ``medium`` and ``xhigh`` as they are;
  ``max``, which OpenAI has no name for, as its highest, ``xhigh``. ``high``
  is Anthropic's default effort, so it asks for nothing beyond the default:
  nothing is sent (the upstream's default, or the agent's own setting). That
  matters: Claude Code sends ``thinking: {type: "adaptive"}`` with ``effort:
  "high"`` on every request (2.1.x), and an upstream model that does not
  reason (OpenAI's gpt-4o, say) refuses any ``reasoning_effort``.
  An effort other than ``high`` wins over a budget: it is the direct knob.
- ``thinking: {type: "enabled", budget_tokens: N}`` (with no effort, or
  ``high``): by :data:`BUDGET_EFFORTS` (Claude Code's "think", "think hard"
  and "ultrathink" budgets, 4,000, 10,000 and 31,999 tokens, fall in low,
  medium and high).
- ``adaptive``: the effort's mapping (the model decides how much to think).
- ``disabled``: nothing sent, whatever the effort. Upstreams differ in how
  reasoning is turned off ("none", "minimal", or not at all) and an unknown
  value is refused: the agent's own ``reasoning_effort`` (or the upstream's
  default) stays.

A budget is checked as Anthropic checks it: at least 1,024 tokens (the
schema's check) and less than ``max_tokens``, unless an
``interleaved-thinking-…`` beta is asked for (with it, Anthropic lets the
budget pass ``max_tokens``).
"""

from __future__ import annotations

from agenthost.adapters.anthropic.errors import invalid
from agenthost.adapters.anthropic.schemas import MessagesRequest

BUDGET_EFFORTS = ((4096, "low"), (16384, "medium"))
"""A budget up to each bound, the effort it asks for; above the last, ``high``."""

EFFORTS = {"low": "low", "medium": "medium", "xhigh": "xhigh", "max": "xhigh"}
"""``output_config.effort`` → ``reasoning_effort``; ``high``, Anthropic's default, is not here."""


def to_reasoning_effort(request: MessagesRequest, *, interleaved: bool = False) -> str | None:
    """The run's ``reasoning_effort`` (None: not set); a bad budget is a 400."""
    thinking = request.thinking
    asked = request.output_config.effort if request.output_config else None
    effort = EFFORTS.get(asked) if asked is not None else None
    if thinking is not None and thinking.type == "enabled":
        budget = _checked_budget(thinking.budget_tokens, request.max_tokens, interleaved)
        if effort is None:
            return next((e for bound, e in BUDGET_EFFORTS if budget <= bound), "high")
    if thinking is not None and thinking.type == "disabled":
        return None
    return effort


def _checked_budget(budget: int | None, max_tokens: int, interleaved: bool) -> int:
    if budget is None:
        raise invalid("thinking.budget_tokens: Field required")
    if budget >= max_tokens and not interleaved:
        raise invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
    return budget
