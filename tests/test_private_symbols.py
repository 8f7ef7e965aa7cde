"""Every part of a library that agenthost uses although the library does not publish it.

Each entry is a place in agenthost's code, the library's private (or
undocumented, internal-module) symbol it relies on, and why nothing public
does the job. The library is capped below its next minor release in
pyproject.toml wherever a change would break agenthost rather than only slow
it, so that an upgrade is a deliberate step: raise the cap, and this test
says at once whether the symbols are still there.

To keep a new private use: add it to PRIVATE (and cap the library) in the
same commit.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
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
        "concurrent.futures.process",
        ("ProcessPoolExecutor._processes",),
        "agents/tools/processes.py (the pool's workers, terminated at shutdown)",
        "a hung tool's worker would keep the server from exiting; Python 3.14 adds the public "
        "ProcessPoolExecutor.terminate_workers(). Without the attribute the workers are only "
        "shut down, not terminated: no cap (the standard library), this test notices.",
        None,
    ),
    Private(
        "anyio._backends._asyncio",
        ("_task_states", "TaskState.cancel_scope"),
        "agents/shields.py (whether an anyio scope holds the task that saves a turn)",
        "anyio has no public way to ask; opening a shield everywhere costs ~5 µs a save, twice "
        "per /v1/responses request. tests/agents/test_shields.py checks the answer in every "
        "case; without the table every save is shielded.",
        '"anyio>=4.6,<4.17"',
    ),
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
    Private(
        "pydantic._internal._config",
        ("config_defaults",),
        "adapters/model_builds.py (defer_build's default, while FastAPI's OpenAPI models and "
        "the a2a-sdk's A2A 0.3 models are imported)",
        "no public switch defers the models of a module agenthost does not own; building them "
        "at import was ~0.1 s of start-up CPU. Without the table they are built at import "
        "again (slower, not broken): no cap, this test notices.",
        None,
    ),
    Private(
        "a2a.server.request_handlers",
        ("DefaultRequestHandler._active_task_registry",),
        "adapters/a2a/cluster.py (which tasks run on this replica, to cancel one held here)",
        "the SDK's handler neither takes an active-task registry in its constructor nor "
        "exposes the one it makes.",
        'a2a = ["a2a-sdk[fastapi,grpc,sqlite]>=1.3,<1.4"]',
    ),
    Private(
        "a2a.server.request_handlers.request_handler",
        ("validate_request_params",),
        "adapters/a2a/validation.py (a large request's required fields checked off the loop, "
        "then the handler method below the SDK's check, found by its wrapper's code through "
        "__wrapped__; tests/adapters/a2a/test_validation.py pins that the chain still holds it)",
        "the SDK checks every field on the event loop (~20 µs a Struct value) and offers no "
        "way to check elsewhere or skip its check.",
        'a2a = ["a2a-sdk[fastapi,grpc,sqlite]>=1.3,<1.4"]',
    ),
    Private(
        "a2a.server.tasks",
        ("database_task_store", "database_push_notification_config_store"),
        "adapters/a2a/sdk_databases.py (None in sys.modules until a database URL asks)",
        "a2a-sdk 1.3 imports its database modules (SQLAlchemy, ~0.3 s) from "
        "a2a.server.tasks and a2a.server.cluster whatever the store; nothing public skips "
        "them short of an extra without SQLAlchemy.",
        'a2a = ["a2a-sdk[fastapi,grpc,sqlite]>=1.3,<1.4"]',
    ),
    Private(
        "a2a.server.cluster",
        ("database_event_stream", "database_task_store"),
        "adapters/a2a/sdk_databases.py (as above)",
        "as above.",
        'a2a = ["a2a-sdk[fastapi,grpc,sqlite]>=1.3,<1.4"]',
    ),
    Private(
        "a2a.server.request_handlers.response_helpers",
        ("build_error_response",),
        "adapters/a2a/rpc.py (the JSON-RPC front's error bodies, byte for byte the SDK's)",
        "public modules whose names the SDK does not list in __all__; the fronts must "
        "answer exactly as the SDK's own routes do.",
        'a2a = ["a2a-sdk[fastapi,grpc,sqlite]>=1.3,<1.4"]',
    ),
    Private(
        "a2a.server.routes.common",
        ("serialize_list_tasks_response",),
        "adapters/a2a/rpc.py (ListTasks answers as the SDK writes them)",
        "as above.",
        'a2a = ["a2a-sdk[fastapi,grpc,sqlite]>=1.3,<1.4"]',
    ),
    Private(
        "a2a.utils.error_handlers",
        ("build_rest_error_payload",),
        "adapters/a2a/rest.py (HTTP+JSON problem bodies)",
        "as above.",
        'a2a = ["a2a-sdk[fastapi,grpc,sqlite]>=1.3,<1.4"]',
    ),
    Private(
        "a2a.server.jsonrpc_models",
        ("InternalError", "JSONRPCError"),
        "adapters/a2a/rpc.py",
        "as above.",
        'a2a = ["a2a-sdk[fastapi,grpc,sqlite]>=1.3,<1.4"]',
    ),
]


def _has(module: str, name: str) -> bool:
    """``module`` has ``name`` (an attribute, a submodule, or ``Class.member``: a class
    attribute, or an instance attribute its ``__init__`` sets)."""
    owner, _, member = name.partition(".")
    package = importlib.import_module(module)
    value = getattr(package, owner, None)
    if value is None and not member:
        if f"{module}.{owner}" in sys.modules:  # kept out (None) by sdk_databases.defer()
            folders = getattr(package, "__path__", ())
            return any((Path(folder) / f"{owner}.py").exists() for folder in folders)
        return importlib.util.find_spec(f"{module}.{owner}") is not None
    if value is None or not member or hasattr(value, member):
        return value is not None
    return f"self.{member} =" in inspect.getsource(value.__init__)


@pytest.mark.parametrize("private", PRIVATE, ids=lambda p: p.module)
def test_the_private_symbols_still_exist(private: Private) -> None:
    missing = [name for name in private.names if not _has(private.module, name)]
    assert not missing, f"{private.module} lost {missing}, used by {private.used_by}"


@pytest.mark.parametrize("private", [p for p in PRIVATE if p.cap], ids=lambda p: p.module)
def test_the_library_is_capped(private: Private) -> None:
    pyproject = (Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert private.cap in pyproject
