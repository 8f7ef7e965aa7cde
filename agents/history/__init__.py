"""Memory strategies: what of a conversation the model sees.

They apply to the transcript sent to the model, before every model request;
the session always keeps the whole conversation.
"""

from agenthost.agents.history.base import HistoryContext, MemoryStrategy, Unconstrained
from agenthost.agents.history.strategies import SlidingWindow, TokenBudget
from agenthost.agents.history.summarize import (
    SUMMARIZE_INSTRUCTIONS,
    SUMMARY_HEADING,
    Summarize,
    transcript_text,
)
from agenthost.agents.history.tokens import Counter, TokenCounter, estimate_tokens
from agenthost.agents.history.units import Units, split_units

__all__ = [
    "SUMMARIZE_INSTRUCTIONS",
    "SUMMARY_HEADING",
    "Counter",
    "HistoryContext",
    "MemoryStrategy",
    "SlidingWindow",
    "Summarize",
    "TokenBudget",
    "TokenCounter",
    "Unconstrained",
    "Units",
    "estimate_tokens",
    "split_units",
    "transcript_text",
]
