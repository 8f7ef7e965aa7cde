"""The agent of the keep-alive tests (loaded by ``import:``): a silent tool call, then an answer.

Every request makes the model call ``pause``, which sleeps :data:`PAUSE`
seconds without a word, then answers ``"done: <the user's text>"``.
"""

import anyio

from agenthost.agents import ChatAgent, tool
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call

PAUSE = 3.5
"""Seconds of silence: over 3 keep-alive intervals of 1 s, and over nginx's read time-out."""


@tool
async def pause() -> str:
    """Waits a few seconds, saying nothing."""
    await anyio.sleep(PAUSE)
    return "paused"


def _reply(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        user = [m.text for m in request.messages if m.role == "user"]
        return f"done: {user[-1]}"
    return call("pause")


pausing = ChatAgent("pausing", FunctionModel(_reply), tools=(pause,))
