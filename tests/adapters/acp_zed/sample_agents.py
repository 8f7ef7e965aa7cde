"""The agent the ``acp-stdio`` tests load by ``import:`` in the spawned process.

One agent does what each test needs, so that one process serves them all
(starting one costs seconds): "calculate" calls the calculator, "ask" asks
the user's name, "noisy" runs a tool that prints, "tidy" calls ``delete_file``
(which needs the user's approval; each real call is a line in the file
``DESK_DELETIONS`` names); anything else is answered with the transcript the
model was sent.

This module prints to stdout on import and its tool prints too: the command
must keep such noise off the protocol stream.
"""

import os

from agenthost.agents import ASK_USER, ChatAgent, tool
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.tools import Tool, calculator
from agenthost.agents.tools.base import ToolOptions

print("noise from an agent module on stdout")


@tool
def noisy() -> str:
    """Prints to stdout, as careless code does."""
    print("noise from a tool on stdout")
    return "quiet"


def delete_file(path: str) -> str:
    """Deletes a file (pretends to: records the call)."""
    with open(os.environ["DESK_DELETIONS"], "a") as deletions:
        deletions.write(path + "\n")
    return f"deleted {path}"


def _reply(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        result = last.parts[0]
        content = getattr(result, "content", "")
        if getattr(result, "name", "") == "ask_user":
            return f"Nice to meet you, {content}."
        if getattr(result, "name", "") == "delete_file":
            return f"tool said: {content}"
        return f"It is {content}."
    text = last.text
    if text.startswith("calculate"):
        return ["Let me calculate.", call("calculator", '{"expression": "6*7"}')]
    if text.startswith("ask"):
        return call("ask_user", '{"question": "What is your name?"}')
    if text.startswith("tidy"):
        return call("delete_file", '{"path": "/tmp/notes.txt"}')
    if text.startswith("noisy"):
        return call("noisy")
    return " | ".join(m.text for m in request.messages if m.role != "system")


desk = ChatAgent(
    "desk",
    FunctionModel(_reply),
    tools=(
        calculator,
        noisy,
        ASK_USER,
        Tool(delete_file, options=ToolOptions(approval=True)),
    ),
)
