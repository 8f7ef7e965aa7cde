"""Zed's Agent Client Protocol over stdio (``pip install agenthost[acp-zed]``)."""

try:
    import acp  # noqa: F401
except ImportError as exc:  # pragma: no cover
    raise ImportError(
        "the Agent Client Protocol command needs agent-client-protocol: "
        "pip install 'agenthost[acp-zed]'"
    ) from exc

from agenthost.adapters.acp_zed.agent import ZedAgent
from agenthost.adapters.acp_zed.stdio import claim_stdout, serve_stdio

__all__ = ["ZedAgent", "claim_stdout", "serve_stdio"]
