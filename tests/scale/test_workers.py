"""``agenthost serve --workers 2``: two processes on one port, sharing Redis as replicas do.

Which worker a connection reaches is the kernel's choice: the tests find the
workers among the parent's children and read, in ``/proc``, which of them holds
each open connection.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agenthost.app.workers import cgroup_cpu_quota
from tests.commands import agenthost, clean_env, serving
from tests.stores import RedisServer, redis  # noqa: F401 (fixture)

CONFIG = (
    "agents:\n  - {name: recall, import: 'tests.scale.replica_agents:recall'}\n"
    "  - {name: paced, import: 'tests.scale.replica_agents:paced'}\n"
)


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("workers") / "agents.yaml"
    path.write_text(CONFIG)
    return path


@pytest.fixture(scope="module")
def env(redis: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:  # noqa: F811
    tasks = tmp_path_factory.mktemp("tasks") / "tasks.db"
    return clean_env(
        AGENTHOST_WORKERS="2",
        AGENTHOST_SESSION_STORE=redis.url,
        AGENTHOST_ADAPTERS="openai,a2a",
        AGENTHOST_A2A_TASK_STORE=f"sqlite:///{tasks}",
        AGENTHOST_DRAIN_SECONDS="0",
    )


@pytest.fixture(scope="module")
def server(
    config: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    log = tmp_path_factory.mktemp("log") / "serve.log"
    with log.open("wb") as stderr, serving(config, env, stderr=stderr) as (process, url):
        logged(log, "serving with 2 workers")  # both accept: either may get a connection
        yield process, url


def logged(log: Path, text: str, timeout: float = 120) -> None:
    """Until ``text`` is in the server's log ``log``."""
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        assert time.monotonic() < deadline, f"{text!r} not logged:\n{log.read_text()}"
        time.sleep(0.2)


def workers(parent: int, count: int = 2, timeout: float = 120) -> list[int]:
    """The pids of ``parent``'s ``count`` workers (multiprocessing's resource tracker aside)."""
    deadline = time.monotonic() + timeout
    while True:
        children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        found = [
            int(pid) for pid in children if b"spawn_main" in _read(Path(f"/proc/{pid}/cmdline"))
        ]
        if len(found) == count or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def connections_held(pid: int, port: int) -> int:
    """How many established connections to ``port`` process ``pid`` holds open."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].split(":")[1], 16)
        if local_port == port and fields[3] == "01":  # ESTABLISHED, on the server's side
            inodes.add(fields[9])
    held = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            held += 1
    return held


def total_requests(url: str, agent: str) -> float:
    text = httpx.get(f"{url}/metrics").text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("agenthost_requests_total{") and f'agent="{agent}"' in line
    )


def test_both_workers_take_connections_and_continue_each_others_conversations(
    server: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, url = server
    pids = workers(process.pid)
    assert len(pids) == 2
    port = int(url.rsplit(":", 1)[1])
    clients = [httpx.Client(base_url=url, timeout=60) for _ in range(16)]
    try:
        previous = None
        for turn, client in enumerate(clients):  # a Responses chain, one connection a turn
            body = {"model": "recall", "input": f"turn {turn}", "store": True}
            if previous is not None:
                body["previous_response_id"] = previous
            response = client.post("/v1/responses", json=body)
            assert response.status_code == 200, response.text
            previous = response.json()["id"]
            answer = response.json()["output"][0]["content"][0]["text"]
            assert answer == " | ".join(f"turn {n}" for n in range(turn + 1))
        held = {pid: connections_held(pid, port) for pid in pids}
        assert sum(held.values()) == len(clients), held
        assert all(count > 0 for count in held.values()), held  # both workers served turns
    finally:
        for client in clients:
            client.close()
    # Each worker counts its own runs; any one's /metrics sums both.
    assert [total_requests(url, "recall") for _ in range(4)] == [len(clients)] * 4


def test_a_killed_worker_is_replaced_and_sigterm_drains_every_worker(
    config: Path, env: dict[str, str], tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    with log.open("wb") as stderr, serving(config, env, stderr=stderr) as (process, url):
        logged(log, "serving with 2 workers")
        first, second = workers(process.pid)
        os.kill(first, signal.SIGKILL)
        for _ in range(10):  # the other worker answers meanwhile
            assert httpx.get(f"{url}/v1/models").status_code == 200
        replaced = workers(process.pid)
        assert second in replaced and first not in replaced and len(replaced) == 2
        new = next(pid for pid in replaced if pid != second)
        logged(log, f"(pid {new}) is ready")
        # A stream in flight when SIGTERM arrives ends whole; then every process exits 0.
        with httpx.Client(base_url=url, timeout=60) as client:
            body = {"model": "paced", "messages": [{"role": "user", "content": "go"}]}
            with client.stream("POST", "/v1/chat/completions", json={**body, "stream": True}) as r:
                lines = r.iter_lines()
                assert next(lines).startswith("data:")
                process.send_signal(signal.SIGTERM)
                rest = [line for line in lines if line]
        assert rest[-1] == "data: [DONE]"
        assert process.wait(timeout=60) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in replaced)


def test_more_than_one_worker_is_refused_with_state_in_process(config: Path) -> None:
    command = agenthost("serve", "--config", str(config), "--workers", "2", "--port", "0")
    result = subprocess.run(
        command, env=clean_env(), capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 2
    assert "AGENTHOST_SESSION_STORE=redis://" in result.stderr
    assert "AGENTHOST_A2A_TASK_STORE" in result.stderr


def test_auto_counts_the_cpus_a_cgroup_quota_allows(tmp_path: Path) -> None:
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert cgroup_cpu_quota(tmp_path) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_quota(tmp_path) is None
