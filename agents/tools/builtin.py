"""Built-in tools, referred to by name in config: ``think``, ``calculator``,
``current_time``, ``ask_user`` (answered by the client). ``http_get`` needs
options (its allowed hosts): see :mod:`agents.tools.http`. The sync ones run
under a thread ceiling of their own (:data:`~agents.tools.threads.BUILTIN_THREADS`),
so they never wait behind user tools."""

from __future__ import annotations

import ast
import datetime as dt
import math
import operator
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agenthost.agents.errors import FatalToolError
from agenthost.agents.tools.base import BaseTool
from agenthost.agents.tools.client import ASK_CLIENT_MODEL, ASK_USER, LIST_ROOTS, ClientTool
from agenthost.agents.tools.functions import tool
from agenthost.agents.tools.threads import BUILTIN_THREADS

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "log": math.log,
    "exp": math.exp,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
}
_CONSTANTS = {"pi": math.pi, "e": math.e}
# Bounds that keep one expression from eating the CPU or memory. One big-int
# operation holds the GIL until it ends, so a worker thread does not help:
# every intermediate is bounded instead, and a power is refused *before* it is
# computed when its result would be too large (``((9**999)**999)**999``).
_MAX_EXPONENT = 1000
_MAX_LENGTH = 500
_MAX_DIGITS = 1000
_LOG10_2 = math.log10(2)


def evaluate(expression: str) -> int | float:
    """Evaluate arithmetic safely: numbers, + - * / // % **, parentheses,
    a few math functions and constants. Never uses ``eval``."""
    if len(expression) > _MAX_LENGTH:
        raise FatalToolError(f"expression longer than {_MAX_LENGTH} characters")
    try:
        tree = ast.parse(expression.replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise FatalToolError(f"not an arithmetic expression: {expression!r}") from exc
    try:
        result: int | float = _eval(tree.body)
        return result
    except (ArithmeticError, ValueError, TypeError) as exc:
        raise FatalToolError(f"cannot evaluate {expression!r}: {exc}") from exc


def _eval(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        _check_cost(node.op, left, right)
        return _bounded(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        args = [_eval(arg) for arg in node.args]
        if node.func.id == "round" and len(args) > 1 and abs(args[1]) > _MAX_DIGITS:
            raise FatalToolError(f"round to more than {_MAX_DIGITS} digits")
        return _bounded(_FUNCTIONS[node.func.id](*args))
    raise FatalToolError(f"unsupported syntax: {ast.unparse(node)!r}")


def _digits(value: Any) -> float:
    """Decimal digits of an int (an estimate from its bit length); 0 for a float."""
    return value.bit_length() * _LOG10_2 if isinstance(value, int) else 0.0


def _check_cost(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse an operation whose result would exceed the bounds, before running it."""
    if isinstance(op, ast.Pow):
        if abs(right) > _MAX_EXPONENT:
            raise FatalToolError(f"exponent larger than {_MAX_EXPONENT}")
        big = isinstance(left, int) and isinstance(right, int) and right > 0
        if big and right * math.log10(max(abs(left), 1)) > _MAX_DIGITS:
            raise FatalToolError(f"result longer than {_MAX_DIGITS} digits")
    elif isinstance(op, ast.Mult) and _digits(left) + _digits(right) > _MAX_DIGITS + 1:
        raise FatalToolError(f"result longer than {_MAX_DIGITS} digits")


def _bounded(value: Any) -> Any:
    if isinstance(value, complex):  # a fractional power of a negative number
        raise FatalToolError("the result is not a real number")
    if isinstance(value, int) and _digits(value) > _MAX_DIGITS + 1:
        raise FatalToolError(f"result longer than {_MAX_DIGITS} digits")
    return value


@tool(ceiling=BUILTIN_THREADS)
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as "(17 + 25) * 2" or "sqrt(2) ** 2".

    Supports + - * / // % ** (or ^), parentheses, sqrt, abs, round, min, max,
    log, exp, sin, cos, tan, pi and e.
    """
    result = evaluate(expression)
    if isinstance(result, float) and result.is_integer() and abs(result) < 2**53:
        result = int(result)
    return str(result)


@tool(ceiling=BUILTIN_THREADS)
def current_time(timezone: str = "UTC") -> str:
    """The current date and time in ISO 8601, in an IANA time zone such as "Europe/Paris"."""
    try:
        zone = ZoneInfo(timezone)
    # OSError: a name that is a folder of the zone database ("America"); its
    # message would tell the model the server's paths.
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise FatalToolError(f"unknown time zone {timezone!r}") from None
    return dt.datetime.now(zone).isoformat(timespec="seconds")


@tool
async def think(thought: str) -> str:
    """Think step by step before acting: write your reasoning, plans or notes here.

    Nothing happens and nobody sees it; use it to reason about tool results
    or to check a plan before the next step.
    """
    return "Noted."


BUILTIN_TOOLS: dict[str, BaseTool | ClientTool] = {
    t.name: t for t in (think, calculator, current_time, ASK_USER, LIST_ROOTS, ASK_CLIENT_MODEL)
}
