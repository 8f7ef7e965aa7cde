"""Nothing holds the process past its shutdown time: a real served process whose
event loop a tool blocks still exits within drain + grace + margin after SIGTERM,
saying why; a second signal ends it at once (app/watchdog.py, ShutdownWatchdog)."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import httpx
import pytest
from mcp import Client

from tests.commands import clean_env, serving

BLOCKING = (
    "agents:\n"
    "  - {name: blocking, import: 'tests.app.shutdown_agents:blocking'}\n"
    "  - {name: backtracking, import: 'tests.app.shutdown_agents:backtracking'}\n"
)
GRACE, MARGIN = 1.0, 2.0


@contextmanager
def served(tmp_path: Path, **env: str) -> Iterator[tuple[Any, str, IO[bytes]]]:
    """``agenthost serve`` of the blocking agents, its stderr in a file."""
    config = tmp_path / "agents.yaml"
    config.write_text(BLOCKING)
    settings = {
        "AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS": str(GRACE),
        "AGENTHOST_SHUTDOWN_MARGIN_SECONDS": str(MARGIN),
        # Not measured by coverage: its exit-time save would run after the watchdog's exit.
        "COVERAGE_PROCESS_CONFIG": "",
        **env,
    }
    with (
        (tmp_path / "stderr").open("w+b") as log,
        serving(config, clean_env(**settings), kill=True, stderr=log) as (process, url),
    ):
        yield process, url, log


def block_the_loop(url: str, agent: str, seconds: str) -> threading.Thread:
    """A chat turn whose tool blocks the server's loop, sent from a thread; once it runs."""

    def ask() -> None:
        body = {"model": agent, "messages": [{"role": "user", "content": seconds}]}
        with contextlib.suppress(httpx.TransportError):  # the process ends under it
            httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60)

    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    time.sleep(1)  # the tool is running: /healthz would no longer answer
    with pytest.raises(httpx.TimeoutException):
        httpx.get(f"{url}/healthz", timeout=0.5)
    return asker


def stderr_of(log: IO[bytes]) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")


def test_a_tool_blocking_the_loop_cannot_hold_the_process_past_its_shutdown_time(
    tmp_path: Path,
) -> None:
    with served(tmp_path) as (process, url, log):
        block_the_loop(url, "blocking", "600")
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
        took = time.monotonic() - signalled
        text = stderr_of(log)
    # Before, the process waited out the tool (600 s here; 18.2 s for 3 s of grace in
    # the attack round).
    assert code == 1, text
    assert GRACE + MARGIN - 0.1 < took < GRACE + MARGIN + 3, took
    assert f"ends at the latest {GRACE + MARGIN:.1f} s from now" in text, text
    line = next(line for line in text.splitlines() if "shutdown still not done" in line)
    assert "the event loop is busy" in line and "shutdown_agents.py" in line, line
    assert "in block" in line, line


def test_a_second_sigterm_exits_at_once(tmp_path: Path) -> None:
    with served(tmp_path, AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS="60") as (process, url, log):
        block_the_loop(url, "blocking", "600")
        process.send_signal(signal.SIGTERM)
        time.sleep(1)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
        took = time.monotonic() - signalled
        text = stderr_of(log)
    assert code == 128 + signal.SIGTERM, text
    assert took < 2, took
    assert "second SIGTERM: exiting now" in text, text


def test_a_second_sigint_exits_at_once_without_a_blocked_loop(tmp_path: Path) -> None:
    # A stream keeps the shutdown waiting (the grace time is long): Ctrl-C twice ends it.
    with served(
        tmp_path, AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS="60", AGENTHOST_DRAIN_SECONDS="30"
    ) as (process, url, log):
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert httpx.get(f"{url}/readyz").status_code == 503  # draining, serving
        signalled = time.monotonic()
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
        took = time.monotonic() - signalled
        text = stderr_of(log)
    assert code == 128 + signal.SIGINT, text
    assert took < 2, took
    assert "second SIGINT: exiting now" in text, text


def test_a_c_call_holding_the_gil_is_ended_by_the_backstop(tmp_path: Path) -> None:
    # The signal is handled while the tool sleeps; then one regular expression holds
    # the GIL for hours, and no Python thread (the watchdog's) can run: SIGALRM, whose
    # default action ends the process, does it 2 s after the deadline.
    with served(tmp_path) as (process, url, log):
        block_the_loop(url, "backtracking", "2")
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
        took = time.monotonic() - signalled
        text = stderr_of(log)
    assert code == -signal.SIGALRM, text
    assert GRACE + MARGIN + 2 - 0.1 < took < GRACE + MARGIN + 5, took
    assert "ends at the latest" in text, text


ECHO = "agents:\n  - {name: echo, model: echo}\n"


async def until(condition: Callable[[], bool], seconds: float = 30) -> None:
    """Polls ``condition`` (log records, a process: nothing to wait on)."""
    with anyio.fail_after(seconds):
        while not condition():  # noqa: ASYNC110
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_sigterm_ends_a_stateful_mcp_get_stream_cleanly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A stateful session's standalone GET stream, which no run feeds, lasts until the
    # drain closes it. Before, sse-starlette cancelled it: the client read "peer closed
    # connection without sending complete message body (incomplete chunked read)" and
    # the server logged "ASGI callable returned without completing response" (3 of 3).
    config = tmp_path / "agents.yaml"
    config.write_text(ECHO)
    env = clean_env(
        AGENTHOST_ADAPTERS="mcp",
        AGENTHOST_MCP_STATELESS="false",
        AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS="1",
    )
    caplog.set_level(logging.DEBUG, logger="mcp.client.streamable_http")

    def logged(text: str) -> bool:
        return any(text in record.message for record in caplog.records)

    with (
        (tmp_path / "stderr").open("w+b") as log,
        serving(config, env, stderr=log) as (process, url),
    ):
        async with Client(f"{url}/mcp", mode="legacy") as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == ["echo"]
            await until(lambda: logged("GET SSE connection established"))
            signalled = time.monotonic()
            process.send_signal(signal.SIGTERM)
            await until(lambda: logged("GET stream disconnected"))
            ended = time.monotonic() - signalled
            await until(lambda: process.poll() is not None)
        text = stderr_of(log)
    assert process.returncode == 0, text
    assert ended < 1 + 1 + 3, ended  # the grace time, then the runs' last second
    first_error = next(r for r in caplog.records if "GET stream" in r.message)
    assert "incomplete chunked read" not in caplog.text, first_error
    assert "ended 1 event streams still open" in text, text
    assert "without completing response" not in text, text
