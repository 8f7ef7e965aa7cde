"""The protocols the app serves over HTTP: one line each.

Adding a protocol is one folder under ``adapters/`` (exporting ``Settings``,
``AgentOptions``, ``ConfigSection`` and ``create`` without importing its SDK,
see :class:`agenthost.adapters.base.AdapterPackage`), one line in
:data:`ADAPTERS`, one extra in ``pyproject.toml``, and one test folder. The
app assembles the settings, the config file's schema and the settings
reference from this table.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Annotated, Final, NamedTuple, cast

from pydantic import AfterValidator, WithJsonSchema

from agenthost.adapters.base import AdapterPackage


class Mount(NamedTuple):
    """Where a protocol's adapter package lives, and where the app mounts it."""

    package: str
    prefix: str


ADAPTERS: Final = {
    "openai": Mount("agenthost.adapters.openai", "/v1"),
    "a2a": Mount("agenthost.adapters.a2a", "/a2a"),
    "mcp": Mount("agenthost.adapters.mcp", "/mcp"),
    "acp": Mount("agenthost.adapters.acp", "/acp"),
    "ag_ui": Mount("agenthost.adapters.ag_ui", "/ag-ui"),
    "ai_sdk": Mount("agenthost.adapters.ai_sdk", "/ai-sdk"),
    "anthropic": Mount("agenthost.adapters.anthropic", "/v1/messages"),
    "orchestrate": Mount("agenthost.adapters.orchestrate", "/orchestrate"),
}
"""The HTTP protocols, in the order they are served by default."""


@cache
def package(name: str) -> AdapterPackage:
    """The adapter package of protocol ``name`` (imports no protocol SDK)."""
    return cast(AdapterPackage, importlib.import_module(ADAPTERS[name].package))


STDIO_ONLY: Final = ("acp_zed",)
"""Protocols served only by a stdio command (``acp-stdio``); ``mcp-stdio`` is MCP."""


def _one_of(*names: str) -> AfterValidator:
    def check(value: str) -> str:
        if value not in names:
            raise ValueError(f"unknown protocol {value!r}; known: {', '.join(names)}")
        return value

    return AfterValidator(check)


AdapterName = Annotated[
    str, _one_of(*ADAPTERS), WithJsonSchema({"enum": list(ADAPTERS), "type": "string"})
]
"""A protocol served over HTTP (``AGENTHOST_ADAPTERS``)."""

ProtocolName = Annotated[
    str,
    _one_of(*ADAPTERS, *STDIO_ONLY),
    WithJsonSchema({"enum": [*ADAPTERS, *STDIO_ONLY], "type": "string"}),
]
"""A protocol an agent can be exposed over (``expose:``), stdio ones included."""
