"""Python tools for config/examples/python-tools.yaml.

A module next to the config file imports without being installed; a
function needs type annotations and a docstring (the model reads both).
"""

from __future__ import annotations

from agenthost.agents import FatalToolError, tool


def word_count(text: str, unique: bool = False) -> int:
    """Count the words of a text (or only the distinct ones, with unique=true)."""
    words = text.lower().split()
    return len(set(words)) if unique else len(words)


@tool(name="convert_temperature")
def convert(value: float, to: str = "celsius") -> dict[str, float | str]:
    """Convert a temperature between celsius and fahrenheit.

    Give the value and the unit to convert *to*.
    """
    if to == "celsius":
        return {"value": round((value - 32) * 5 / 9, 2), "unit": "celsius"}
    if to == "fahrenheit":
        return {"value": round(value * 9 / 5 + 32, 2), "unit": "fahrenheit"}
    raise FatalToolError(f"unknown unit {to!r}: use celsius or fahrenheit")
