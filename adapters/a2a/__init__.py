"""A2A 1.0 (JSON-RPC, HTTP+JSON, gRPC) with 0.3 compatibility, via ``a2a-sdk``.

Needs the ``a2a`` extra: ``pip install 'agenthost[a2a]'``. Importing this
package imports no SDK: the app reads :class:`Settings` and
:class:`AgentOptions` of every protocol; :func:`create` loads the SDK.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from agenthost.adapters.a2a.settings import AgentOptions, Settings

if TYPE_CHECKING:
    from agenthost.adapters.a2a.adapter import A2AAdapter
    from agenthost.adapters.base import AdapterContext

V03_MODELS = "a2a.compat.v0_3.types"
"""The SDK's ~100 pydantic models of A2A 0.3, read only by 0.3 requests and cards' 0.3 fields."""

ConfigSection = None
"""A2A has no top-level section in the config file."""

SDK_TELEMETRY = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"
"""The a2a-sdk's switch for its OpenTelemetry spans; ``false`` unless set."""


def create(context: AdapterContext, settings: Settings) -> A2AAdapter:
    """The adapter the app mounts; cards name its prefix, gRPC checks the app's keys."""
    from agenthost.adapters.a2a import sdk_databases
    from agenthost.adapters.model_builds import import_deferred

    # Before the SDK's first import: its database stores only when a URL asks (sdk_databases),
    # its A2A 0.3 models (imported by its routes and handlers) built by their first use.
    sdk_databases.defer()
    # And its OpenTelemetry spans (a span per handler call and per event) off: they go to
    # the global tracer provider, which agenthost never sets (app/tracing.py has its own),
    # so they cost CPU and trace nothing (bench/README.md, relay.py, session 15). The SDK's
    # own switch, read at its import: a deployment that sets a global provider may set it.
    os.environ.setdefault(SDK_TELEMETRY, "false")
    try:
        import_deferred(V03_MODELS)
        import a2a.server  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "the A2A adapter needs the a2a extra: pip install 'agenthost[a2a]'"
        ) from exc
    from agenthost.adapters.a2a.adapter import A2AAdapter
    from agenthost.adapters.a2a.options import A2AOptions

    replies = frozenset(
        name
        for name, options in context.agent_options.items()
        if isinstance(options, AgentOptions) and options.reply == "message"
    )
    agent_stack = frozenset(
        name
        for name, options in context.agent_options.items()
        if isinstance(options, AgentOptions) and options.agent_stack
    )
    return A2AAdapter(
        context,
        A2AOptions(
            **settings.model_dump(),
            prefix=context.prefix,
            principal_for_key=context.principal_for_key,
            principal_for_token=context.principal_for_token,
            token_issuer=context.token_issuer,
            message_replies=replies,
            agent_stack_agents=agent_stack,
        ),
    )


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create"]
