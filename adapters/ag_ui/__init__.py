"""AG-UI 1.0, the stream web front ends speak (``pip install agenthost[ag-ui]``).

Importing this package imports no SDK, nor does :func:`create`: the adapter imports
``ag-ui-protocol`` on its first run (:mod:`.turn`).
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from agenthost.adapters.ag_ui.settings import Settings

if TYPE_CHECKING:
    from agenthost.adapters.ag_ui.adapter import AGUIAdapter
    from agenthost.adapters.base import AdapterContext

AgentOptions = None
"""AG-UI has no per-agent section in the config file."""
ConfigSection = None
"""AG-UI has no top-level section in the config file."""


def create(context: AdapterContext, settings: Settings) -> AGUIAdapter:
    """The adapter the app mounts (at ``/ag-ui``)."""
    if importlib.util.find_spec("ag_ui") is None:  # the SDK is imported on the first run
        raise ImportError("the AG-UI adapter needs ag-ui-protocol: pip install 'agenthost[ag-ui]'")
    from agenthost.adapters.ag_ui.adapter import AGUIAdapter

    return AGUIAdapter(context)


__all__ = ["AgentOptions", "ConfigSection", "Settings", "create"]
