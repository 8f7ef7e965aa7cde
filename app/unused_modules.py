"""Modules a server process never runs, kept from being imported at start-up.

httpx imports its command-line client (``httpx._main``: click, rich and
pygments) whenever those are installed, to export ``httpx.main``; acp-sdk's
``fastapi[standard]`` installs them, so every ``agenthost`` process paid for
them on its first httpx import (the a2a-sdk's push sender, MCP, provider
clients). :func:`skip` marks ``httpx._main`` absent (``None`` in
``sys.modules``) before httpx is first imported, and httpx then defines the
stub ``main`` it has for installs without the CLI. Nothing in a server calls
``httpx.main``; the ``httpx`` command itself is another process.

Kept although it names httpx's private module: there is no public switch,
and the import costs ~130 ms of CPU and ~3.5 MiB at start-up (measured after
uvicorn and FastAPI are in). If httpx renames the module this only costs
that again; tests/test_private_symbols.py notices.
"""

from __future__ import annotations

import sys

UNUSED = ("httpx._main",)


def skip() -> None:
    """Mark :data:`UNUSED` absent, unless already imported (then this does nothing)."""
    if "httpx" in sys.modules:
        return
    for name in UNUSED:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
