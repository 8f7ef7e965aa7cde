"""Which OpenAI-compatible upstreams cannot work without a key.

A model without a key is sent with a placeholder (local servers such as
Ollama, vLLM, llama.cpp or LM Studio need none), so a hosted API without one
would answer every request 401. For the hosted APIs listed here that is
refused when the model is made (``agenthost check`` and start-up), naming the
variable to set; any other base URL may need no key and is let through.
"""

from __future__ import annotations

from agenthost.agents.errors import UserError

OPENAI_HOST = "api.openai.com"
"""OpenAI's own API: the SDK's default base URL, whose key is ``OPENAI_API_KEY``."""

HOSTED_KEYS = {
    OPENAI_HOST: "OPENAI_API_KEY",
    "api.anthropic.com": "ANTHROPIC_API_KEY",
    "api.cerebras.ai": "CEREBRAS_API_KEY",
    "api.deepseek.com": "DEEPSEEK_API_KEY",
    "api.fireworks.ai": "FIREWORKS_API_KEY",
    "api.groq.com": "GROQ_API_KEY",
    "api.mistral.ai": "MISTRAL_API_KEY",
    "api.together.xyz": "TOGETHER_API_KEY",
    "api.x.ai": "XAI_API_KEY",
    "generativelanguage.googleapis.com": "GEMINI_API_KEY",
    "openrouter.ai": "OPENROUTER_API_KEY",
}
"""Hosted OpenAI-compatible APIs, each with the variable its own SDKs and docs read."""

HOSTED_SUFFIXES = {".openai.azure.com": "AZURE_OPENAI_API_KEY"}
"""Hosted APIs with a host per customer (an Azure OpenAI resource)."""


def key_variable(host: str) -> str | None:
    """The variable that holds the key of hosted API ``host``; None: it may need none."""
    host = host.lower().rstrip(".")
    if host in HOSTED_KEYS:
        return HOSTED_KEYS[host]
    return next((v for suffix, v in HOSTED_SUFFIXES.items() if host.endswith(suffix)), None)


def missing_key(model: str, host: str, *, base_url_set: bool) -> UserError | None:
    """The refusal of model ``openai:MODEL`` at ``host`` with no key (None: none is needed).

    ``base_url_set``: the base URL came from config, where the environment's
    ``OPENAI_API_KEY`` is never sent, so only ``model_settings.api_key`` helps.
    """
    variable = key_variable(host)
    if variable is None:
        return None
    if base_url_set or variable != "OPENAI_API_KEY":
        what = (
            f"set model_settings.api_key (e.g. `api_key: ${{{variable}}}` "
            f"with {variable} set in the environment)"
        )
    else:
        what = "set OPENAI_API_KEY in the environment"
    if not base_url_set:
        what += "; for a local server (Ollama, vLLM...) set model_settings.base_url"
    return UserError(
        f"model 'openai:{model}' is served by {host} and has no API key: {what}", param="api_key"
    )
