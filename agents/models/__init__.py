"""Chat models: one protocol, one module per provider."""

from agenthost.agents.models.base import (
    BaseChatModel,
    ChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
)
from agenthost.agents.models.echo import EchoModel
from agenthost.agents.models.testing import FunctionModel, ScriptedModel

__all__ = [
    "BaseChatModel",
    "ChatModel",
    "EchoModel",
    "FunctionModel",
    "ModelRequest",
    "ModelResponse",
    "ModelStreamEvent",
    "ScriptedModel",
]
