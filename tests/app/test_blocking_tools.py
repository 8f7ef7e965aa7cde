"""No tool can freeze the server: a real served process keeps answering
/healthz while a tool attacks it (95 % within 100 ms, none stalled), and
SIGTERM still ends it."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx

from tests.app.test_server import agenthost_serve

TOOLS = (
    "agents:\n"
    "  - {name: calculating, import: 'tests.app.sample_agents:calculating'}\n"
    "  - {name: spinning, import: 'tests.app.sample_agents:spinning'}\n"
    "  - {name: hanging, import: 'tests.app.sample_agents:hanging'}\n"
)


def ask(
    url: str, agent: str, text: str, answers: list[str], client: httpx.Client | None = None
) -> None:
    body = {"model": agent, "messages": [{"role": "user", "content": text}]}
    try:
        post = client.post if client is not None else httpx.post
        reply = post(f"{url}/v1/chat/completions", json=body, timeout=120)
        answers.append(reply.text)
    except httpx.TransportError as exc:
        answers.append(repr(exc))


def health_latencies(url: str, seconds: float) -> list[float]:
    """Seconds each /healthz took, probed every 20 ms for ``seconds``."""
    latencies = []
    with httpx.Client(timeout=10) as client:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            started = time.perf_counter()
            assert client.get(f"{url}/healthz").status_code == 200
            latencies.append(time.perf_counter() - started)
            time.sleep(0.02)
    return latencies


def test_healthz_keeps_answering_while_a_tool_attacks(tmp_path: Path) -> None:
    with agenthost_serve(tmp_path, config=TOOLS) as (_, url):
        answers: list[str] = []
        attacks = [
            threading.Thread(
                target=ask, args=(url, "calculating", "((9**999)**999)**999", answers)
            ),
            threading.Thread(target=ask, args=(url, "spinning", "3", answers)),
        ]
        for attack in attacks:
            attack.start()
        latencies = health_latencies(url, 2.5)
        for attack in attacks:
            attack.join(timeout=30)
    assert len(latencies) > 20
    # A frozen loop shows as one probe of seconds (before the fix: the whole
    # computation, or the 3 s spin). One probe of ~110 ms among ~80 was seen
    # on a loaded 2-core CI run under coverage: the spinning thread's GIL
    # turns, not a stall; so the bound is on the 95th percentile, and the
    # worst probe must stay well under any tool's run time.
    ordered = sorted(latencies)
    assert ordered[int(len(ordered) * 0.95)] < 0.1, ordered[-5:]
    assert ordered[-1] < 0.5, ordered[-5:]
    assert any("result longer than 1000 digits" in answer for answer in answers), answers
    assert any("result: " in answer for answer in answers), answers


def test_hung_sync_tools_do_not_slow_the_calculator(tmp_path: Path) -> None:
    # Before, every sync tool shared one 40-thread pool: with 45 hung calls
    # (each abandoned at its 5 s time-out) the calculator took 27.7 s (here,
    # where they hang for good, it timed out at 60 s).
    limits = httpx.Limits(max_connections=None)
    with (
        agenthost_serve(tmp_path, config=TOOLS) as (_, url),
        # One client: 45 new ones would each build an SSL context, seconds of
        # this process's CPU on a loaded machine, and time the test, not the server.
        httpx.Client(limits=limits) as client,
    ):
        answers: list[str] = []
        hung = [
            threading.Thread(target=ask, args=(url, "hanging", "600", answers, client))
            for _ in range(45)
        ]
        for thread in hung:
            thread.start()
        time.sleep(2)
        calculated: list[str] = []
        started = time.perf_counter()
        ask(url, "calculating", "6 * 7", calculated, client)
        took = time.perf_counter() - started
        for thread in hung:
            thread.join(timeout=60)
    assert "result: 42" in calculated[0], calculated
    assert took < 2, took
    assert sum("hang timed out after 5 s" in answer for answer in answers) == 45, answers[:3]


def test_sigterm_ends_the_process_within_the_grace_time_while_a_tool_spins(
    tmp_path: Path,
) -> None:
    # Not measured by coverage: its exit-time save, fighting the traced spinning
    # thread for the GIL, took 11-23 s on CI after the server had finished.
    env = {"AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS": "2", "COVERAGE_PROCESS_CONFIG": ""}
    with agenthost_serve(tmp_path, config=TOOLS, **env) as (process, url):
        answers: list[str] = []
        spinner = threading.Thread(target=ask, args=(url, "spinning", "600", answers))
        spinner.start()
        time.sleep(1)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        took = time.monotonic() - signalled
        spinner.join(timeout=10)
    # The grace time, then the interrupted run's last events (app/serving.py),
    # with slack for a loaded 2-core machine. Before the fix the process never
    # exited (the 30 s wait above fails).
    assert took < 2 + 8, took
    assert "server_shutting_down" in answers[0], answers
