"""The protocols the app serves over HTTP: one line each.

Adding a protocol is one folder under ``adapters/`` (exporting ``Options`` and
``create``, see :mod:`agenthost.adapters.base`), one line in :data:`ADAPTERS`,
one extra in ``pyproject.toml``, and one test folder.
"""

from __future__ import annotations

from typing import Annotated, Final, NamedTuple

from pydantic import AfterValidator, WithJsonSchema


class Mount(NamedTuple):
    """Where a protocol's adapter package lives, and where the app mounts it."""

    package: str
    prefix: str


ADAPTERS: Final = {
    "openai": Mount("agenthost.adapters.openai", "/v1"),
    "a2a": Mount("agenthost.adapters.a2a", "/a2a"),
    "mcp": Mount("agenthost.adapters.mcp", "/mcp"),
    "acp": Mount("agenthost.adapters.acp", "/acp"),
}
"""The HTTP protocols, in the order they are served by default."""

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
