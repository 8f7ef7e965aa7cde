"""Several processes serving one port: ``agenthost serve --workers N``.

The parent binds the port and starts N workers (``spawn``: each imports and builds
the app afresh, as a replica does) that accept from that one listening socket; the
kernel gives each connection to a worker waiting in ``accept``. The parent holds no
agent and serves nothing. It forwards SIGTERM and SIGINT to the workers (each drains
as a single process does, and a second signal ends them at once, as it would one),
restarts a worker that dies while serving, and stops them all when one fails before it
is ready: a broken config, extra or port fails the same way on every restart.

Workers share no memory, so their state must be shared as replicas share it
(:func:`unshared_state`). Their metrics are summed across workers through
prometheus_client's multiprocess mode (a directory of per-process files made here);
the scrape-time series (``process_*``, sessions held, loop stalls) are the answering
worker's own.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from multiprocessing.context import SpawnProcess
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from agenthost.app.metrics import METRICS_DIR_VARIABLE
from agenthost.app.settings import Settings

logger = logging.getLogger("agenthost")

# How long a worker may take to become ready (the embedded model loads in its start-up).
READY_SECONDS = 300.0
# The parent's look at its workers, and a worker's look at its parent.
POLL_SECONDS = 0.2

_spawn = multiprocessing.get_context("spawn")
multiprocessing.allow_connection_pickling()  # the listening socket goes to each worker


def available_cpus() -> int:
    """The CPUs this process may use: its affinity, capped by a cgroup CPU quota."""
    cpus = len(os.sched_getaffinity(0))
    quota = cgroup_cpu_quota()
    return max(1, min(cpus, math.ceil(quota))) if quota else cpus


def cgroup_cpu_quota(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    try:  # cgroup v2: "max 100000" or "200000 100000"
        limit, period = (root / "cpu.max").read_text().split()
        return None if limit == "max" else int(limit) / int(period)
    except (OSError, ValueError):
        pass
    try:  # cgroup v1
        quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        length = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return None if quota <= 0 else quota / length
    except (OSError, ValueError):
        return None


def worker_count(settings: Settings) -> int:
    """How many workers ``settings`` asks for (``auto``: :func:`available_cpus`)."""
    return available_cpus() if settings.workers == "auto" else settings.workers


def unshared_state(settings: Settings) -> str | None:
    """What several workers of ``settings`` could not share (None: nothing)."""
    problems = []
    if settings.session_store == "memory":
        problems.append(
            "sessions, stored responses and IBM ACP runs are in this process "
            "(set AGENTHOST_SESSION_STORE=redis://…)"
        )
    served = {name: own for name, own in settings.protocols.items() if name in settings.adapters}
    a2a = served.get("a2a")
    if a2a is not None and getattr(a2a, "task_store", "memory") == "memory":
        problems.append(
            "A2A tasks are in this process (set AGENTHOST_A2A_TASK_STORE=postgresql+asyncpg://…)"
        )
    mcp = served.get("mcp")
    if mcp is not None and not getattr(mcp, "stateless", True):
        problems.append("MCP's stateful sessions live in one process (AGENTHOST_MCP_STATELESS)")
    if not problems:
        return None
    return (
        "more than one worker needs the state shared, as several replicas do: "
        + "; ".join(problems)
        + ". A connection may reach any worker."
    )


def bind(settings: Settings) -> socket.socket:
    """The listening socket every worker accepts from."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((settings.host, settings.port))
    sock.listen(settings.backlog)
    sock.set_inheritable(True)
    return sock


def serve_workers(flags: dict[str, Any], settings: Settings, count: int) -> int:
    """Run ``count`` workers of ``agenthost serve`` (``flags``: its command-line settings)
    until SIGTERM or SIGINT; the exit code is 0 when every worker ended cleanly."""
    sock = bind(settings)
    metrics_dir = tempfile.mkdtemp(prefix="agenthost-metrics-")
    os.environ[METRICS_DIR_VARIABLE] = metrics_dir  # the workers inherit it
    signals: list[int] = []
    for handled in (signal.SIGTERM, signal.SIGINT):
        signal.signal(handled, lambda number, frame: signals.append(number))
    pool = _Pool(flags, sock, count)
    try:
        return pool.run(signals)
    finally:
        sock.close()
        shutil.rmtree(metrics_dir, ignore_errors=True)


class _Pool:
    def __init__(self, flags: dict[str, Any], sock: socket.socket, count: int) -> None:
        self.flags = flags
        self.sock = sock
        self.workers: list[tuple[SpawnProcess, Event]] = [self._start(i) for i in range(count)]
        self.stopping = False
        self.starting: set[int | None] = set()  # replacements not ready yet

    def _start(self, index: int) -> tuple[SpawnProcess, Event]:
        ready = _spawn.Event()
        process = _spawn.Process(
            target=run_worker,
            args=(self.flags, index, self.sock, ready, os.getpid()),
            name=f"agenthost-worker-{index}",
        )
        process.start()
        return process, ready

    def _forward(self, signals: list[int]) -> None:
        while signals:
            number = signals.pop(0)
            if not self.stopping:
                logger.info("%s: stopping %d workers", signal.Signals(number).name, len(self))
            self.stopping = True
            for process, _ in self.workers:  # a second signal: the workers end at once
                if process.exitcode is None and process.pid is not None:
                    os.kill(process.pid, signal.SIGTERM)

    def __len__(self) -> int:
        return len(self.workers)

    def run(self, signals: list[int]) -> int:
        if not self._wait_ready(signals):
            self.stopping = True
            self._forward([signal.SIGTERM])
            return self._join(signals) or 1
        pids = ", ".join(str(process.pid) for process, _ in self.workers)
        logger.info("serving with %d workers (pids %s)", len(self), pids)
        while not self.stopping:
            time.sleep(POLL_SECONDS)
            self._forward(signals)
            self._restart_dead()
        return self._join(signals)

    def _wait_ready(self, signals: list[int]) -> bool:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            self._forward(signals)
            if self.stopping:
                return True  # asked to stop while starting: drain what started
            for index, (process, ready) in enumerate(self.workers):
                if process.exitcode is not None and not ready.is_set():
                    logger.error(
                        "worker %d exited with code %s before it was ready: stopping",
                        index,
                        process.exitcode,
                    )
                    return False
            if all(ready.is_set() for _, ready in self.workers):
                return True
            time.sleep(POLL_SECONDS)
        logger.error("the workers were not ready in %.0f s: stopping", READY_SECONDS)
        return False

    def _restart_dead(self) -> None:
        for index, (process, ready) in enumerate(self.workers):
            if process.exitcode is None:
                if ready.is_set() and process.pid in self.starting:
                    self.starting.discard(process.pid)
                    logger.info("worker %d (pid %s) is ready", index, process.pid)
                continue
            _forget_metrics(process.pid)
            logger.error(
                "worker %d (pid %s) exited with code %s: starting another",
                index,
                process.pid,
                process.exitcode,
            )
            self.workers[index] = replacement = self._start(index)
            self.starting.add(replacement[0].pid)

    def _join(self, signals: list[int]) -> int:
        for process, _ in self.workers:
            while process.exitcode is None:
                process.join(POLL_SECONDS)
                self._forward(signals)
            _forget_metrics(process.pid)
        codes = [process.exitcode for process, _ in self.workers]
        return 0 if all(code == 0 for code in codes) else 1


def _forget_metrics(pid: int | None) -> None:
    """Drop a dead worker's live gauges (its counters keep counting in the sums)."""
    if pid is None or not os.environ.get(METRICS_DIR_VARIABLE):
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def run_worker(
    flags: dict[str, Any], index: int, sock: socket.socket, ready: Event, parent: int
) -> None:
    """One worker (in a spawned process): build the app as ``agenthost serve`` does and
    serve ``sock``; ``ready`` is set once it accepts."""
    os.setpgrp()  # a terminal's Ctrl-C reaches the parent alone, which forwards it once
    for number in (signal.SIGTERM, signal.SIGINT):  # until the server takes them: a stop
        signal.signal(number, _stop_while_starting)
    _end_with_parent(parent)
    from agenthost.app.cli import serve_on

    if index > 0:
        flags = {**flags, "metrics_port": 0}  # the metrics port: the first worker's
    sys.exit(serve_on(flags, [sock], started=ready.set))


def _stop_while_starting(number: int, frame: object) -> None:
    raise SystemExit(0)  # nothing served yet: nothing to drain


def _end_with_parent(parent: int) -> None:
    """SIGTERM this worker (a drain) once its parent is gone: killed, say."""

    def watch(signal_self: Callable[[], None]) -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        signal_self()

    threading.Thread(
        target=watch,
        args=(lambda: os.kill(os.getpid(), signal.SIGTERM),),
        name="agenthost-parent-watch",
        daemon=True,
    ).start()
