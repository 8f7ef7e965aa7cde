"""Module-level tools a worker process can import (``process=True`` tools' tests, the bench)."""

from __future__ import annotations

import time


def crunch(n: int) -> int:
    """Adds the numbers below n: CPU-bound, and one C call that holds the interpreter."""
    return sum(range(n))


def hang(seconds: float) -> str:
    """Sleeps (a worker that never ends, for shutdown tests)."""
    time.sleep(seconds)
    return "late"
