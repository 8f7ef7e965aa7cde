"""IBM's Agent Communication Protocol over REST (``pip install agenthost[acp]``)."""

from __future__ import annotations

from dataclasses import dataclass

try:
    import acp_sdk  # noqa: F401
except ImportError as exc:  # pragma: no cover
    raise ImportError("the ACP adapter needs acp-sdk: pip install 'agenthost[acp]'") from exc

from agenthost.adapters.acp.adapter import (
    DEFAULT_MAX_RUN_BYTES,
    DEFAULT_MAX_RUNS,
    DEFAULT_RUN_TTL,
    ACPAdapter,
)
from agenthost.adapters.base import AdapterContext
from agenthost.adapters.leases import DEFAULT_LEASE_SECONDS


@dataclass(frozen=True, slots=True)
class ACPOptions:
    """How many runs are kept, in count and bytes, and for how long after they end."""

    max_runs: int = DEFAULT_MAX_RUNS
    run_ttl: float = DEFAULT_RUN_TTL
    run_lease_seconds: float = DEFAULT_LEASE_SECONDS
    max_run_bytes: int = DEFAULT_MAX_RUN_BYTES


Options = ACPOptions


def create(context: AdapterContext, options: ACPOptions) -> ACPAdapter:
    """The adapter the app mounts (at ``/acp``)."""
    return ACPAdapter(
        context,
        max_runs=options.max_runs,
        run_ttl=options.run_ttl,
        lease_seconds=options.run_lease_seconds,
        max_run_bytes=options.max_run_bytes,
    )


__all__ = ["ACPAdapter", "ACPOptions", "Options", "create"]
