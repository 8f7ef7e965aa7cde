"""IBM's Agent Communication Protocol over REST (``pip install agenthost[acp]``)."""

try:
    import acp_sdk  # noqa: F401
except ImportError as exc:  # pragma: no cover
    raise ImportError("the ACP adapter needs acp-sdk: pip install 'agenthost[acp]'") from exc

from agenthost.adapters.acp.adapter import ACPAdapter

__all__ = ["ACPAdapter"]
