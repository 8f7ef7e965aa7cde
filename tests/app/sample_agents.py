"""Agents defined in code, for the ``import:`` config tests."""

import json
import time
from collections.abc import AsyncIterator

import anyio

from agenthost.agents import ChatAgent, Message, TextDelta
from agenthost.agents.messages import ToolResultPart
from agenthost.agents.models import EchoModel, ModelRequest
from agenthost.agents.models.base import BaseChatModel, ModelStreamEvent
from agenthost.agents.models.echo import word_response
from agenthost.agents.models.testing import FunctionModel, Reply, call
from agenthost.agents.tools import ToolOptions, tool
from agenthost.agents.tools.builtin import calculator


def shout(messages: list[Message]) -> str:
    """Answers in capitals."""
    return messages[-1].text.upper()


greeter = ChatAgent("greeter", EchoModel(), instructions="Greet.")
not_an_agent = 42


class PacedModel(BaseChatModel):
    """Streams one word every 0.1 s for a minute: a stream longer than any grace period."""

    name = "paced"
    words = 600

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        words = []
        for _ in range(self.words):
            await anyio.sleep(0.1)
            words.append("word ")
            yield TextDelta("word ")
        yield word_response(request, Message.assistant("".join(words)))


paced = ChatAgent("paced", PacedModel())


class TenSecondModel(PacedModel):
    """Streams one word every 0.1 s for 10 s: a stream shorter than a 30 s grace period."""

    words = 100


paced10 = ChatAgent("paced10", TenSecondModel())


async def stream_words(messages: list[Message]) -> AsyncIterator[str]:
    """Streams the last message back, word by word."""
    for word in messages[-1].text.split():
        yield word + " "


def _call_then_answer(tool_name: str, argument: str) -> FunctionModel:
    """Calls ``tool_name`` with the user's text as ``argument``, then answers its result."""

    def reply(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        results = [p for p in last.parts if isinstance(p, ToolResultPart)]
        if results:
            return f"result: {results[0].content[:80]}"
        return call(tool_name, json.dumps({argument: last.text}))

    return FunctionModel(reply)


@tool
def spin(seconds: str) -> str:
    """Burns the CPU in pure Python for ``seconds``: a CPU-bound tool."""
    end = time.monotonic() + float(seconds)
    n = 0
    while time.monotonic() < end:
        n += sum(i * i for i in range(1000))
    return str(n)


calculating = ChatAgent(
    "calculating", _call_then_answer("calculator", "expression"), tools=(calculator,)
)
spinning = ChatAgent("spinning", _call_then_answer("spin", "seconds"), tools=(spin,))


@tool(options=ToolOptions(timeout=5))
def hang(seconds: str) -> str:
    """Never answers in time (a lock never released): a hung sync tool, abandoned at 5 s."""
    time.sleep(float(seconds))
    return "late"


hanging = ChatAgent("hanging", _call_then_answer("hang", "seconds"), tools=(hang,))
