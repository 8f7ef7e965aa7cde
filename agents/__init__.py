"""The agent runtime: messages, models, tools, sessions and agents.

Knows nothing of HTTP or of any protocol SDK; adapters build on it.
"""

from agents.agent import Agent, BaseAgent
from agents.chat import ChatAgent
from agents.errors import (
    AgentError,
    FatalToolError,
    MaxStepsExceeded,
    ModelBusy,
    ModelError,
    RunRefused,
    ToolError,
    UserError,
)
from agents.function import FunctionAgent
from agents.messages import (
    DataPart,
    FilePart,
    Message,
    MessageInput,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    to_messages,
)
from agents.options import ModelSettings, RunOptions
from agents.results import (
    RunFinished,
    RunResult,
    RunUpdate,
    SubAgentUpdate,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from agents.sessions import (
    ANONYMOUS,
    Conversation,
    InMemorySession,
    MemoryManager,
    Session,
    SessionKey,
)
from agents.tools import ASK_USER, ClientTool, Tool, answer_pending, question_of, tool

__all__ = [
    "ANONYMOUS",
    "ASK_USER",
    "Agent",
    "AgentError",
    "BaseAgent",
    "ChatAgent",
    "ClientTool",
    "Conversation",
    "DataPart",
    "FatalToolError",
    "FilePart",
    "FunctionAgent",
    "InMemorySession",
    "MaxStepsExceeded",
    "MemoryManager",
    "Message",
    "MessageInput",
    "ModelBusy",
    "ModelError",
    "ModelSettings",
    "Part",
    "RunFinished",
    "RunOptions",
    "RunRefused",
    "RunResult",
    "RunUpdate",
    "Session",
    "SessionKey",
    "SubAgentUpdate",
    "TextDelta",
    "TextPart",
    "Tool",
    "ToolCallFinished",
    "ToolCallPart",
    "ToolCallStarted",
    "ToolError",
    "ToolResultPart",
    "Usage",
    "UserError",
    "answer_pending",
    "question_of",
    "to_messages",
    "tool",
]
