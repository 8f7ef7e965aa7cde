"""The JSON limits (:mod:`agenthost.adapters.body_limits`) on a gRPC request's protobuf.

A data part or metadata is a ``Struct``: JSON as protobuf. Parsing one is
fast (upb, in C), but converting it for the agent costs ~1 µs a value, so a
gRPC request is held to the same bounds as a JSON body: values, members of
one object, nesting, characters in one string. A message too small to pass
any of them (every value takes at least two bytes) is not walked.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message
from google.protobuf.struct_pb2 import ListValue, Struct, Value

from agenthost.adapters.body_limits import BodyLimits, BodyProblem

_SETTING = "AGENTHOST_MAX_JSON_"


def may_pass_limits(size: int, limits: BodyLimits) -> bool:
    """Whether a message of ``size`` bytes could pass a limit (else no walk is needed).

    Nesting is bounded by protobuf's own recursion limit (100 messages: about
    50 levels of JSON) below the default depth.
    """
    return size > 2 * min(limits.max_values, limits.max_keys) or size > limits.max_string


def check_message(message: Message, limits: BodyLimits) -> None:
    """:class:`BodyProblem` for the first limit ``message`` passes. Blocking."""
    values = 0
    stack: list[tuple[Message, int]] = [(message, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limits.max_depth:
            raise BodyProblem(f"nested deeper than {limits.max_depth} levels", _SETTING + "DEPTH")
        children: Any
        if isinstance(item, Value):
            kind = item.WhichOneof("kind")
            if kind == "string_value":
                _string(item.string_value, limits)
            elif kind in ("struct_value", "list_value"):
                stack.append((getattr(item, kind), depth))
            continue
        if isinstance(item, Struct):
            if len(item.fields) > limits.max_keys:
                raise BodyProblem(
                    f"an object has {len(item.fields):,} members, over {limits.max_keys:,}",
                    _SETTING + "KEYS",
                )
            children = item.fields
            count = len(children)
        elif isinstance(item, ListValue):
            children = item.values
            count = len(children)
        else:
            children, count = [], 0
            for field, value in item.ListFields():
                if field.message_type is None:
                    if isinstance(value, str):
                        _string(value, limits)
                    continue
                many = field.is_repeated  # a map or a list: counted before it is walked
                count += len(value) if many else 1
                children.append((value, many, field.message_type.GetOptions().map_entry))
        # Counted before any child is touched: upb makes each one's wrapper slowly (~7 µs).
        values += count
        if values > limits.max_values:
            raise BodyProblem(f"more than {limits.max_values:,} values", _SETTING + "VALUES")
        if isinstance(item, Struct):
            for key, child in item.fields.items():
                _string(key, limits)
                stack.append((child, depth + 1))
        elif isinstance(item, ListValue):
            stack.extend((child, depth + 1) for child in children)
        else:
            for value, many, is_map in children:
                if is_map:
                    stack.extend((v, depth + 1) for v in value.values() if isinstance(v, Message))
                elif many:
                    stack.extend((v, depth + 1) for v in value)
                else:
                    stack.append((value, depth + 1))


def _string(text: str, limits: BodyLimits) -> None:
    if len(text) > limits.max_string:
        raise BodyProblem(
            f"a string has {len(text):,} characters, over {limits.max_string:,}",
            _SETTING + "STRING",
        )
