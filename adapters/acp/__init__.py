"""IBM's Agent Communication Protocol over REST (``pip install agenthost[acp]``).

Importing this package imports no SDK; :func:`create` loads acp-sdk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthost.adapters.acp.settings import Settings

if TYPE_CHECKING:
    from agenthost.adapters.acp.adapter import ACPAdapter
    from agenthost.adapters.base import AdapterContext

AgentOptions = None
"""IBM ACP has no per-agent section in the config file."""
ConfigSection = None
"""IBM ACP has no top-level section in the config file."""


def create(context: AdapterContext, settings: Settings) -> ACPAdapter:
    """The adapter the app mounts (at ``/acp``)."""
    try:
        import acp_sdk  # noqa: F401
    except ImportError as exc:  # pragma: no cover
        raise ImportError("the ACP adapter needs acp-sdk: pip install 'agenthost[acp]'") from exc
    from agenthost.adapters.acp.adapter import ACPAdapter

    return ACPAdapter(
        context,
        max_runs=settings.max_runs,
        run_ttl=settings.run_ttl,
        lease_seconds=context.lease_seconds,
        max_run_bytes=settings.max_run_bytes,
    )


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create"]
