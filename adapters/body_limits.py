"""JSON request bodies parsed without holding the event loop, within limits on their structure.

Parsing, validating and converting a body costs time in proportion to its
number of values, not its bytes: a 4 MiB array of a million zeros took
seconds to become a protobuf ``Struct`` or a list of pydantic models, and
the whole server waited meanwhile. So every protocol's body entry:

1. bounds the structure (:class:`BodyLimits`: values in the body, members
   of one object, nesting depth, characters in one string) before the
   expensive step, and refuses a body past one with its own 4xx naming the
   limit (:class:`BodyProblem`);
2. does its parsing and conversion of a body of :attr:`BodyLimits.offload_bytes`
   or more in a small bounded thread pool (:func:`off_loop`), where Python
   code gives the loop its turn every few milliseconds; a smaller body
   stays on the loop (a thread hop costs ~60-100 µs; its parse less).

:func:`load_json` is the check: orjson parses (C, ~10 ms per MiB at worst),
then a byte count bounds the structure, and only a body that count cannot
clear is walked. JSON that orjson refuses but Python's ``json`` reads (an
integer over 64 bits) is read by ``json`` only when the count shows it is
small; NaN, ±Infinity, an overflowing float (``1e999999``) and a lone UTF-16
surrogate (``"\\ud800"``) are refused as not JSON (RFC 8259 allows none of
them; they made 500s further on).

The limits are the process's (:func:`use_limits`, set by the app from its
settings): the protocols' parse entries run where no adapter context
reaches (FastAPI routes, the SDKs' handlers).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import orjson

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BodyLimits:
    """Bounds on a JSON body's structure, and where its parsing runs."""

    max_values: int = 100_000
    """Values in the whole body (``AGENTHOST_MAX_JSON_VALUES``)."""
    max_keys: int = 10_000
    """Members of one object (``AGENTHOST_MAX_JSON_KEYS``)."""
    max_depth: int = 64
    """Nesting of arrays and objects (``AGENTHOST_MAX_JSON_DEPTH``)."""
    max_string: int = 8 * 1024 * 1024
    """Characters in one string or key (``AGENTHOST_MAX_JSON_STRING``)."""
    offload_bytes: int = 64 * 1024
    """Bodies this large or larger are parsed in the pool (``AGENTHOST_BODY_OFFLOAD_BYTES``)."""
    workers: int = 2
    """Threads of the worker pool (``AGENTHOST_BODY_WORKERS``)."""


class BodyProblem(ValueError):
    """A body refused before any work: not JSON (``limit`` None) or past a limit.

    ``limit`` names the setting (``AGENTHOST_MAX_JSON_VALUES``…) a client can quote;
    ``lenient`` says Python's ``json`` would have read the body (NaN, a lone
    surrogate…), so an SDK given it would not refuse it as not JSON.
    """

    def __init__(self, message: str, limit: str | None = None, *, lenient: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.limit = limit
        self.lenient = lenient


_limits = BodyLimits()
_pool: ThreadPoolExecutor | None = None
_SETTING: Final = "AGENTHOST_MAX_JSON_"


def use_limits(limits: BodyLimits) -> None:
    """Make ``limits`` the process's (the app does, from its settings, before serving)."""
    global _limits, _pool
    if _pool is not None and limits.workers != _limits.workers:
        _pool.shutdown(wait=False)
        _pool = None
    _limits = limits


def current_limits() -> BodyLimits:
    return _limits


def _workers() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(_limits.workers, thread_name_prefix="agenthost-body")
    return _pool


async def off_loop(size: int, work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` for a body of ``size`` bytes: inline when small, else in the worker pool.

    The pool is bounded: past its threads, bodies wait their turn (their bytes
    are already bounded by the app's body budget). A cancelled request's work
    still finishes in its thread; nobody reads its result.
    """
    if size < _limits.offload_bytes:
        return work(*args)
    return await asyncio.get_running_loop().run_in_executor(_workers(), work, *args)


def load_json(body: bytes) -> Any:
    """The body's JSON value within the limits; :class:`BodyProblem` otherwise. Blocking."""
    limits = _limits
    fits = _fits(body, limits)
    if not fits and _least_values(body, limits.max_values) > limits.max_values:
        # Refused unparsed: orjson holds the GIL ~0.2 s building 300,000 members.
        raise BodyProblem(f"more than {limits.max_values:,} values", _SETTING + "VALUES")
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if not fits:
            # Not read a second, slower way: a body this large must be JSON orjson takes.
            raise BodyProblem(f"not valid JSON: {exc}") from None
        value = _strict_json(body)
    if not fits:
        _walk(value, limits)
    return value


def load_json_for_sdk(body: bytes) -> Any:
    """:func:`load_json`, but None for a body that is not JSON at all (its SDK answers that
    in its own words); still :class:`BodyProblem` for one past a limit, or that the SDK
    would read but not answer well (NaN, a lone surrogate). Blocking."""
    try:
        return load_json(body)
    except BodyProblem as problem:
        if problem.limit is None and not problem.lenient:
            return None
        raise


def refusal(problem: BodyProblem) -> str:
    """The client-facing text of ``problem``."""
    if problem.limit is None:
        return f"the request body is {problem.message}"
    return f"the request body is too complex: {problem.message} ({problem.limit})"


def _fits(body: bytes, limits: BodyLimits) -> bool:
    """Whether counting bytes alone shows the body within the limits (no walk needed).

    Every value but the last of a container is followed by a comma, so commas
    and brackets bound the values (commas inside strings only overcount).
    """
    if len(body) > limits.max_string:
        return False
    opened = body.count(b"[") + body.count(b"{")
    commas = body.count(b",")
    return (
        opened <= limits.max_depth
        and commas + 1 <= limits.max_keys
        and (commas + opened + 1 <= limits.max_values)
    )


def _least_values(body: bytes, limit: int) -> int:
    """At least this many values, counted without parsing (past ``limit``: no more counting).

    An unescaped quote ends a string, so ``":`` and ``",`` occur only after a
    key or a string value, never inside one (``\\":``, an escaped quote or a
    string ending in a backslash, is not counted): the members, or the strings
    followed by a comma, are values (the larger count, not the sum: an
    object's string values are its members). With no escaped quote at all,
    quotes alternate opening and closing, and every comma between strings
    separates two values.
    """
    keys = body.count(b'":') - body.count(b'\\":')
    strings = body.count(b'",') - body.count(b'\\",')
    least = max(keys, strings)
    if least > limit or b'\\"' in body:
        return least
    quotes = body.count(b'"')
    if quotes > 2 * limit:  # splitting would cost more: a string is at least half a value
        return max(least, quotes // 4)
    commas = sum(outside.count(b",") for outside in body.split(b'"')[::2])
    return max(least, commas + 1)


def _walk(value: Any, limits: BodyLimits) -> None:
    """Refuse the first limit ``value`` passes; stops as soon as it does."""
    values = 1
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if len(item) > limits.max_keys:
                raise BodyProblem(
                    f"an object has {len(item):,} members, over {limits.max_keys:,}",
                    _SETTING + "KEYS",
                )
            children: Any = item.values()
            for key in item:
                _string(key, limits)
        elif isinstance(item, list):
            children = item
        else:
            if isinstance(item, str):
                _string(item, limits)
            continue
        if depth > limits.max_depth:
            raise BodyProblem(f"nested deeper than {limits.max_depth} levels", _SETTING + "DEPTH")
        values += len(children)
        if values > limits.max_values:
            raise BodyProblem(f"more than {limits.max_values:,} values", _SETTING + "VALUES")
        stack.extend((child, depth + 1) for child in children)


def _string(text: str, limits: BodyLimits) -> None:
    if len(text) > limits.max_string:
        raise BodyProblem(
            f"a string has {len(text):,} characters, over {limits.max_string:,}",
            _SETTING + "STRING",
        )


def _refuse_constant(name: str) -> Any:
    raise BodyProblem(f"not valid JSON: {name} is not a JSON number", lenient=True)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise BodyProblem(f"not valid JSON: {text[:40]} is out of range", lenient=True)
    return number


def _strict_json(body: bytes) -> Any:
    """What orjson refused, read by ``json`` (which takes integers over 64 bits), strictly."""
    try:
        value = json.loads(body, parse_constant=_refuse_constant, parse_float=_finite)
    except UnicodeDecodeError:
        raise BodyProblem("not UTF-8") from None
    except RecursionError:
        raise BodyProblem("nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, or an integer of over 4,300 digits
        if isinstance(exc, BodyProblem):
            raise
        raise BodyProblem(f"not valid JSON: {str(exc).split(';', 1)[0]}") from None
    try:  # a lone surrogate (\ud800) reads as a str no UTF-8 encoder takes
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        message = "not valid JSON: a string holds a lone UTF-16 surrogate"
        raise BodyProblem(message, lenient=True) from None
    return value
