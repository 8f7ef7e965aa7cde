"""The agent every replica of the scale tests serves (loaded by ``import:``).

"ask …" asks the user's name (a run that awaits its client), "slow <tag>" takes
a minute (a run to cancel: when cancelled it leaves a file named <tag> in
``$RECALL_CANCELLED``), "nap <seconds> …" takes that long and then, as
anything else, is answered with the transcript:
the user turns the model was sent, so a reply shows what history it saw.
``paced`` streams ten words over 3 s.
"""

import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from agenthost.agents import ASK_USER, ChatAgent, Message, TextDelta
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.models.base import BaseChatModel, ModelResponse, ModelStreamEvent
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.results import Usage


async def _reply(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"Nice to meet you, {getattr(last.parts[0], 'content', '')}."
    if last.text.startswith("ask"):
        return call("ask_user", '{"question": "What is your name?"}')
    if last.text.startswith("slow"):
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            folder = Path(os.environ["RECALL_CANCELLED"])
            (folder / last.text.removeprefix("slow").strip()).touch()
            raise
    if last.text.startswith("nap"):
        await anyio.sleep(float(last.text.split()[1]))
    return " | ".join(m.text for m in request.messages if m.role == "user")


recall = ChatAgent("recall", FunctionModel(_reply), tools=(ASK_USER,))


class _Paced(BaseChatModel):
    """Streams ten words, one every 0.3 s (a run long enough to follow from elsewhere)."""

    name = "paced"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        words = [f"w{i} " for i in range(10)]
        for word in words:
            await anyio.sleep(0.3)
            yield TextDelta(word)
        yield ModelResponse(Message.assistant("".join(words)), Usage(requests=1))


paced = ChatAgent("paced", _Paced())
