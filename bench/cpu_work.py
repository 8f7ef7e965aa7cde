"""A CPU-bound tool function for bench/tool_processes.py (a worker process imports it)."""


def crunch(n: int) -> int:
    """Adds the numbers below n: one C call that holds the interpreter throughout."""
    return sum(range(n))
