"""What of a framework's state is shown: JSON values as JSON, never the messages or objects."""

from dataclasses import dataclass
from datetime import date

from langchain_core.messages import AIMessage

from agenthost.agents.frameworks.states import json_state


@dataclass
class Point:
    x: int
    y: int


def test_json_values_are_kept_as_the_json_they_encode_to() -> None:
    state = {
        "count": 2,
        "ratio": 0.5,
        "tags": ("a", "b"),
        "nested": {"ok": True, "none": None},
        "point": Point(1, 2),
        "day": date(2026, 12, 3),
    }
    assert json_state(state) == {
        "count": 2,
        "ratio": 0.5,
        "tags": ["a", "b"],
        "nested": {"ok": True, "none": None},
        "point": {"x": 1, "y": 2},
        "day": "2026-12-03",
    }


def test_messages_and_what_json_cannot_carry_are_left_out() -> None:
    state = {
        "messages": ["hi"],
        "last": AIMessage(content="hi"),
        "client": object(),
        "by_number": {1: "one"},
        "kept": "yes",
    }
    assert json_state(state) == {"kept": "yes"}
