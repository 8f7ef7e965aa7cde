"""The agents the durable-runs tests run on every replica (loaded by ``import:``).

``counting`` first says "Counting." and calls its ``count`` tool, which adds one to
the number in the file ``$DURABLE_COUNTER`` (a side effect a test can count), then
streams twelve words, one every 0.25 s: a run long enough to kill its replica
after the tool ran and before the answer ends.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from agenthost.agents import ChatAgent, Message, TextDelta, TextPart, ToolCallPart, tool
from agenthost.agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
)
from agenthost.agents.results import Usage

WORDS = [f"w{i} " for i in range(12)]
ANSWER = "Counting.\n\n" + "".join(WORDS)


@tool
def count() -> str:
    """Count one more (in the counter file)."""
    path = Path(os.environ["DURABLE_COUNTER"])
    number = int(path.read_text() or 0) + 1 if path.exists() else 1
    path.write_text(str(number))
    return str(number)


class _Counting(BaseChatModel):
    name = "counting"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        if request.messages[-1].role == "tool":
            for word in WORDS:
                await anyio.sleep(0.25)
                yield TextDelta(word)
            yield ModelResponse(Message.assistant("".join(WORDS)), Usage(5, 12, 1))
            return
        yield TextDelta("Counting.")
        call = ToolCallPart(id="call_count", name="count", arguments="{}")
        message = Message(role="assistant", parts=[TextPart(text="Counting."), call])
        yield ModelResponse(message, Usage(5, 2, 1), finish_reason="tool_calls")


counting = ChatAgent("counting", _Counting(), tools=(count,))

fragile = ChatAgent("fragile", _Counting(), tools=(count,))
"""The same agent, served with ``durable: false``: its orphaned runs fail."""
