"""Value parsing shared by the app's settings and each protocol's (``AGENTHOST_…``)."""

from __future__ import annotations


def split_commas(value: object) -> object:
    """A comma-separated variable as a list of its non-empty items; other values as given.

    A value that lists nothing (``" , "``) is refused: it must not silently mean "no auth"
    or "no hosts".
    """
    if isinstance(value, str):
        items = [item.strip() for item in value.split(",") if item.strip()]
        if value and not items:
            raise ValueError(f"{value!r} lists nothing; leave it unset or empty instead")
        return items
    return value
