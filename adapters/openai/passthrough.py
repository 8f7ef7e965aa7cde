"""Request fields that are neither sampling settings nor input: relayed or refused.

Each field an OpenAI client may send is handled one of three ways, never
silently dropped (the table is in ``docs/protocols/openai.md``):

- **Relayed, harmless**: ``user``, ``safety_identifier`` and
  ``prompt_cache_key`` identify the caller or hint a cache; they are sent to
  an ``openai:`` upstream as they are and change no answer elsewhere.
- **Run options**: ``reasoning_effort`` (``reasoning.effort``) is a model
  setting any agent takes: relayed by an ``openai:`` model, ignored by models
  that do not reason apart (echo, scripted, local).
- **Relayed or refused**: ``verbosity``,
  ``logit_bias``, ``prediction`` and a ``service_tier`` other than
  ``auto``/``default`` change what an upstream does; they reach an
  ``openai:`` upstream, and an agent whose model cannot relay them answers
  400 naming the param.
- **Refused** (400 naming the param): what no agent here does — audio
  output, web search, Chat ``store: true``, ``truncation: "auto"``,
  ``max_tool_calls``, and ``include`` values that would add content.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agenthost.adapters.openai.checks import refuse
from agenthost.adapters.openai.errors import OpenAIError
from agenthost.agents import Agent, ModelSettings, RunOptions

HARMLESS = ("user", "safety_identifier", "prompt_cache_key")
DEFAULT_TIERS = (None, "auto", "default")
# ``include`` values with nothing to add: reasoning items carry no encrypted content
# (an upstream's reasoning is shown as it is, and never needs to be sent back).
INCLUDABLE = frozenset({"reasoning.encrypted_content"})


def relays(agent: Agent) -> bool:
    return bool(getattr(agent, "relays_upstream_params", False))


def upstream_params(
    agent: Agent, fields: dict[str, Any], *, params: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """The fields set in ``fields`` (Chat Completions names) for the upstream.

    A field that would change the answer is refused (naming it as the
    request does: ``params`` maps Chat names to the request's) when
    ``agent`` cannot relay it; harmless ones pass (ignored by models
    without an upstream).
    """
    where = params or {}
    params = {k: v for k, v in fields.items() if v is not None}
    if params.get("service_tier") in DEFAULT_TIERS:
        params.pop("service_tier", None)
    if not relays(agent):
        for name, value in params.items():
            if name not in HARMLESS:
                raise OpenAIError(
                    400,
                    f"{name} {value!r} is not supported by agent {agent.name!r}: "
                    "only agents on an OpenAI-compatible upstream (openai:) relay it",
                    param=where.get(name, name),
                    code="unsupported_parameter",
                )
    return params or None


RESPONSES_PARAMS = {"verbosity": "text.verbosity"}
"""Where the Responses API names the Chat Completions fields it relays."""


def chat_fields(request: Any) -> dict[str, Any]:
    """Chat Completions: refuse what no agent does; the fields to relay."""
    if request.store:
        raise refuse("store", "store: true (Chat Completions are never stored here) is")
    if request.web_search_options is not None:
        raise refuse("web_search_options", "web search is")
    if request.modalities and set(request.modalities) != {"text"}:
        raise refuse("modalities", "modalities other than text are")
    if request.audio is not None:
        raise refuse("audio", "audio output is")
    names = (*HARMLESS, "service_tier", "verbosity", "logit_bias", "prediction")
    return {name: getattr(request, name) for name in names}


def responses_fields(request: Any) -> dict[str, Any]:
    """Responses: refuse what no agent does; the fields to relay (as Chat names them)."""
    if request.truncation not in (None, "disabled"):
        raise refuse("truncation", f"truncation {request.truncation!r} is")
    if request.max_tool_calls is not None:
        raise refuse("max_tool_calls", "max_tool_calls is")
    for value in request.include or ():
        if value not in INCLUDABLE:
            raise refuse("include", f"include {value!r} is")
    text = request.text
    return {
        **{name: getattr(request, name) for name in (*HARMLESS, "service_tier")},
        "verbosity": text.verbosity if text is not None else None,
    }


def with_upstream(options: RunOptions, params: dict[str, Any] | None) -> RunOptions:
    """``options`` with ``params`` as its model settings' ``upstream_params``."""
    if params is None:
        return options
    settings = replace(options.model_settings or ModelSettings(), upstream_params=params)
    return replace(options, model_settings=settings)
