"""Chat models: one protocol, one module per provider."""

from agents.models.base import (
    BaseChatModel,
    ChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
)
from agents.models.echo import EchoModel
from agents.models.testing import FunctionModel, ScriptedModel

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
