"""Memory strategies: what of a conversation the model sees.

They apply to the transcript sent to the model, before every model request;
the session always keeps the whole conversation.
"""

from agents.history.base import HistoryContext, MemoryStrategy, Unconstrained
from agents.history.strategies import SlidingWindow, TokenBudget
from agents.history.summarize import Summarize
from agents.history.tokens import Counter, TokenCounter, estimate_tokens
from agents.history.units import Units, split_units

__all__ = [
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
]
