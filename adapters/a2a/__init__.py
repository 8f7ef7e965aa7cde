"""A2A 1.0 (JSON-RPC, HTTP+JSON, gRPC) with 0.3 compatibility, via ``a2a-sdk``.

Needs the ``a2a`` extra: ``pip install 'agenthost[a2a]'``.
"""

from __future__ import annotations

from dataclasses import replace

from agenthost.adapters.a2a import sdk_databases

# Before the SDK's first import: its database stores only when a URL asks (sdk_databases).
sdk_databases.defer()

try:
    import a2a.server  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError("the A2A adapter needs the a2a extra: pip install 'agenthost[a2a]'") from exc

from agenthost.adapters.a2a.adapter import A2AAdapter  # noqa: E402
from agenthost.adapters.a2a.options import A2AOptions  # noqa: E402
from agenthost.adapters.base import AdapterContext  # noqa: E402

Options = A2AOptions


def create(context: AdapterContext, options: A2AOptions) -> A2AAdapter:
    """The adapter the app mounts; cards name its prefix, gRPC checks the app's keys."""
    return A2AAdapter(
        context,
        replace(options, prefix=context.prefix, principal_for_key=context.principal_for_key),
    )


__all__ = ["A2AAdapter", "A2AOptions", "Options", "create"]
