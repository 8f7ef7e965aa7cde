"""A framework run's state as JSON, for :class:`~agenthost.agents.StateSnapshot`.

What a front end can be shown of a framework's state: each top-level key whose
value JSON can carry (orjson's types: dicts with string keys, lists, strings,
numbers, booleans, None, dataclasses, dates, UUIDs), as the JSON it encodes to.
Left out: the ``messages`` channel (the conversation, which every protocol
already streams as messages) and any key whose value JSON cannot carry (a
LangChain message, a client object, a pydantic model), rather than a string
that looks like data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

LEFT_OUT = frozenset({"messages"})
"""Keys never shown: the conversation is streamed as messages already."""


def json_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-safe part of ``state`` (see the module's docstring)."""
    shown: dict[str, Any] = {}
    for key, value in state.items():
        if not isinstance(key, str) or key in LEFT_OUT:
            continue
        try:
            shown[key] = orjson.loads(orjson.dumps(value))
        except TypeError:  # orjson.JSONEncodeError: not JSON
            continue
    return shown
