"""The agent every replica of the scale tests serves (loaded by ``import:``).

"ask …" asks the user's name (a run that awaits its client), "slow …" takes
a minute (a run to cancel), anything else is answered with the transcript:
the user turns the model was sent, so a reply shows what history it saw.
"""

import anyio

from agenthost.agents import ASK_USER, ChatAgent
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call


async def _reply(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"Nice to meet you, {getattr(last.parts[0], 'content', '')}."
    if last.text.startswith("ask"):
        return call("ask_user", '{"question": "What is your name?"}')
    if last.text.startswith("slow"):
        await anyio.sleep(60)
    return " | ".join(m.text for m in request.messages if m.role == "user")


recall = ChatAgent("recall", FunctionModel(_reply), tools=(ASK_USER,))
