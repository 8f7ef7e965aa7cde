"""The ``agenthost`` command as the tests start it.

``python -P``: the working directory stays off sys.path, so the repository's
``agents/`` never shadows the OpenAI Agents SDK's ``agents`` (tests/conftest.py
puts the tests on PYTHONPATH instead).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx


def agenthost(*args: str) -> list[str]:
    """``python -P -m agenthost.app ARGS``."""
    return [sys.executable, "-P", "-m", "agenthost.app", *args]


def serve_command(config: Path, port: int) -> list[str]:
    """``agenthost serve`` of ``config`` on 127.0.0.1:``port``."""
    return agenthost("serve", "--config", str(config), "--port", str(port))


ROOT = Path(__file__).parents[1]


def clean_env(**settings: str) -> dict[str, str]:
    """This process's environment without its ``AGENTHOST_*`` settings, plus ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTHOST_")}
    return {**env, **settings}


# What coverage's ``patch = ["subprocess"]`` sets so a child process is measured too.
COVERAGE_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")


def untraced_env(**settings: str) -> dict[str, str]:
    """:func:`clean_env` for a server whose stalls a test times: not under coverage.

    Coverage's line tracer makes every Python-level pass 10-20x slower, so a pass that
    takes 30 ms (the echo model counting the words of a 20k-message chat) holds the
    loop 600 ms in CI and a stall bound measures the tracer, not the server."""
    env = clean_env(**settings)
    for name in COVERAGE_VARIABLES:
        env.pop(name, None)
    return env


def ready(url: str) -> bool:
    """Whether ``url/readyz`` answers 200 now."""
    try:
        return httpx.get(f"{url}/readyz").status_code == 200
    except httpx.TransportError:
        return False


def wait_ready(process: subprocess.Popen[Any], url: str, timeout: float = 180) -> None:
    """Until ``url`` is ready; RuntimeError if ``process`` exits or ``timeout`` s pass first.

    The default is long: start-up imports take 10-30 s on a loaded 2-core machine."""
    deadline = time.monotonic() + timeout
    while not ready(url):
        if process.poll() is not None:
            raise RuntimeError(f"agenthost serve exited with {process.returncode} before ready")
        if time.monotonic() > deadline:
            raise RuntimeError(f"agenthost serve was not ready after {timeout:.0f} s")
        time.sleep(0.1)


@contextmanager
def serving(
    config: Path,
    env: Mapping[str, str] | None = None,
    *,
    timeout: float = 180,
    kill: bool = False,
    **popen: Any,
) -> Iterator[tuple[subprocess.Popen[Any], str]]:
    """``agenthost serve`` of ``config`` on a free port of 127.0.0.1, until it is ready.

    Yields the process and its URL; stops it at the end (SIGTERM, or SIGKILL with
    ``kill``). ``env`` defaults to this process's; ``popen`` goes to ``Popen``. Its
    stderr, unless redirected, is in the error when it does not get ready."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        popen.setdefault("stderr", log)
        popen.setdefault("cwd", ROOT)
        process = subprocess.Popen(
            serve_command(config, port), env=dict(os.environ if env is None else env), **popen
        )
        try:
            try:
                wait_ready(process, url, timeout)
            except RuntimeError as error:
                log.seek(0)
                raise RuntimeError(f"{error}:\n{log.read().decode(errors='replace')}") from None
            yield process, url
        finally:
            process.kill() if kill else process.terminate()
            process.wait(timeout=30)


def free_port() -> int:
    """A port of 127.0.0.1 free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
