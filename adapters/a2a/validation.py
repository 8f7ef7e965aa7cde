"""The SDK's check of a request's required fields, off the loop for a large request.

a2a-sdk's handler methods check every REQUIRED field of the request before
they run (``validate_request_params``), recursing through every message in
it: a data part's ``Struct`` is walked value by value at ~20 µs a value, on
the event loop (50,000 values held it ~1 s). For a request of
``AGENTHOST_BODY_OFFLOAD_BYTES`` or more, :func:`checked` runs the same
public check (``validate_proto_required_fields``) in the body worker pool and
hands back the method below the SDK's decorator (found through the
``__wrapped__`` chain ``functools.wraps`` leaves, by the decorator's code:
the SDK publishes no way to skip its check). What the SDK wraps around the
check (its telemetry span) is skipped with it for such a request; a smaller
request keeps the whole method, whose check is cheap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Final, TypeVar

from a2a.server.request_handlers.request_handler import validate_request_params
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.message import Message

from agenthost.adapters.body_limits import current_limits, off_loop

Method = TypeVar("Method", bound=Callable[..., Any])


async def _call(*_: Any) -> None: ...


async def _stream(*_: Any) -> AsyncIterator[None]:
    yield None


# The code of the decorator's wrappers (one for coroutines, one for async generators).
_CHECKS: Final = frozenset(validate_request_params(probe).__code__ for probe in (_call, _stream))


def unchecked(method: Method) -> Method | None:
    """``method`` below the SDK's required-fields check; None if it has none."""
    wrapper: Any = method
    while (inner := getattr(wrapper, "__wrapped__", None)) is not None:
        if getattr(wrapper, "__code__", None) in _CHECKS:
            return inner  # type: ignore[no-any-return]
        wrapper = inner
    return None


async def checked(method: Method, params: Message) -> Method:
    """``method`` to call with ``params``: for a large request, its fields checked here
    already, off the loop (:class:`~a2a.utils.errors.InvalidParamsError` as the SDK raises)."""
    size = params.ByteSize()
    below = unchecked(method)
    if size < current_limits().offload_bytes or below is None:
        return method
    await off_loop(size, validate_proto_required_fields, params)
    return below
