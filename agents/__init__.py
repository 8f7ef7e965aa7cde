"""The agent runtime: messages, models, tools, sessions and agents.

Knows nothing of HTTP or of any protocol SDK; adapters build on it.
"""

from agenthost.agents.agent import Agent, BaseAgent
from agenthost.agents.chat import ChatAgent
from agenthost.agents.errors import (
    AgentError,
    FatalToolError,
    MaxStepsExceeded,
    ModelBusy,
    ModelError,
    RunRefused,
    ToolError,
    UserError,
)
from agenthost.agents.function import FunctionAgent
from agenthost.agents.messages import (
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
from agenthost.agents.options import ModelSettings, RunOptions
from agenthost.agents.results import (
    RunFinished,
    RunResult,
    RunUpdate,
    SubAgentUpdate,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from agenthost.agents.sessions import (
    ANONYMOUS,
    Conversation,
    InMemorySession,
    MemoryManager,
    Session,
    SessionKey,
)
from agenthost.agents.tools import ASK_USER, ClientTool, Tool, answer_pending, question_of, tool

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
