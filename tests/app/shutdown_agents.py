"""Agents whose tools hold the event loop, for the shutdown watchdog's tests."""

import re
import time

from agenthost.agents import ChatAgent
from agenthost.agents.tools import tool
from tests.app.sample_agents import _call_then_answer


@tool
async def block(seconds: str) -> str:
    """Sleeps on the event loop itself: an async tool that blocks the loop."""
    time.sleep(float(seconds))  # noqa: ASYNC251 (what this tool is for)
    return "woke"


blocking = ChatAgent("blocking", _call_then_answer("block", "seconds"), tools=(block,))


@tool
async def backtrack(seconds: str) -> str:
    """Blocks the loop ``seconds``, then runs a regular expression that backtracks for
    hours in one C call holding the GIL: no Python thread runs until it ends."""
    time.sleep(float(seconds))  # noqa: ASYNC251 (what this tool is for)
    return str(re.match(r"(a+)+$", "a" * 60 + "b"))


backtracking = ChatAgent(
    "backtracking", _call_then_answer("backtrack", "seconds"), tools=(backtrack,)
)
