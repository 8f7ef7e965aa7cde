"""An agent with a tool that needs the user's approval, for each protocol's approval tests."""

from __future__ import annotations

from agenthost.agents import ChatAgent, ToolResultPart
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.tools import Tool
from agenthost.agents.tools.approvals import CANNOT_ASK, DECLINED
from agenthost.agents.tools.base import ToolOptions

ARGUMENTS = '{"path": "/tmp/notes.txt"}'
QUESTION = 'Allow delete_file to run with {"path":"/tmp/notes.txt"}? Answer yes or no.'
RAN = "tool said: deleted /tmp/notes.txt"
WAS_DECLINED = f"tool said: {DECLINED}"
WAS_REFUSED = f"tool said: {CANNOT_ASK}"


class Deleter:
    """An agent whose model calls ``delete_file`` (approval required) then says what the
    tool answered; ``deleted`` records the tool's real calls."""

    def __init__(self, name: str = "deleter") -> None:
        self.deleted: list[str] = []

        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        def reply(request: ModelRequest) -> Reply:
            last = request.messages[-1]
            if last.role == "tool":
                part = last.parts[0]
                assert isinstance(part, ToolResultPart)
                return f"tool said: {part.content}"
            return call("delete_file", ARGUMENTS)

        tool = Tool(delete_file, options=ToolOptions(approval=True))
        self.agent = ChatAgent(name, FunctionModel(reply), tools=(tool,))


STACKER = Deleter("stacker")
stacker = STACKER.agent  # for a config's ``import:`` (the Agent Stack tests)
