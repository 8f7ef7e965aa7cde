"""Every part of a library that agenthost uses although the library does not publish it.

Each entry is a place in agenthost's code, the library's private (or
undocumented, internal-module) symbol it relies on, and why nothing public
does the job. The library is capped below its next minor release in
pyproject.toml wherever a change would break agenthost rather than only slow
it, so that an upgrade is a deliberate step: raise the cap, and this test
says at once whether the symbols are still there.

To keep a new private use: add it to PRIVATE (and cap the library) in the
same commit. The A2A adapter's remaining uses of the a2a-sdk belong here too.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Private:
    module: str
    names: tuple[str, ...]  # attributes of the module, "Class.member" for a member
    used_by: str
    why: str
    cap: str | None  # the requirement in pyproject.toml that caps the library, if any


PRIVATE = [
    Private(
        "uvicorn.config",
        ("HTTP_PROTOCOLS",),
        'app/connections.py (which class uvicorn\'s public http="httptools" choice names; '
        "LimitedHTTPProtocol wraps it)",
        "undocumented though not private: the table behind uvicorn's --http choices. "
        "A rename fails at start-up, not silently: no cap, this test notices.",
        None,
    ),
    Private(
        "mcp.server._streamable_http_modern",
        ("_SSE_PING_INTERVAL",),
        "adapters/mcp/keepalive.py (set to the stream keep-alive at each request)",
        "the SDK waits that long before it sends the head of a 2026-07-28 streamed answer; "
        "until then nothing can keep the request alive behind a proxy, and no option sets it.",
        'mcp = ["mcp>=2.3,<2.4"',
    ),
    Private(
        "httpx",
        ("_main",),
        "app/unused_modules.py (None in sys.modules for httpx._main)",
        "httpx imports its CLI (click, rich, pygments) when they are installed; skipping "
        "it saves ~130 ms CPU and ~3.5 MiB at start-up. A rename only costs that again "
        "(httpx falls back to its stub): no cap, this test notices.",
        None,
    ),
]


def _has(module: str, name: str) -> bool:
    """``module`` has ``name`` (an attribute, a submodule, or ``Class.member``)."""
    owner, _, member = name.partition(".")
    value = getattr(importlib.import_module(module), owner, None)
    if value is None and not member:
        return importlib.util.find_spec(f"{module}.{owner}") is not None
    return value is not None and (not member or hasattr(value, member))


@pytest.mark.parametrize("private", PRIVATE, ids=lambda p: p.module)
def test_the_private_symbols_still_exist(private: Private) -> None:
    missing = [name for name in private.names if not _has(private.module, name)]
    assert not missing, f"{private.module} lost {missing}, used by {private.used_by}"


@pytest.mark.parametrize("private", [p for p in PRIVATE if p.cap], ids=lambda p: p.module)
def test_the_library_is_capped(private: Private) -> None:
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert private.cap in pyproject
