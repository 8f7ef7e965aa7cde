"""``docker compose -f compose.scale.yaml up``: two replicas behind nginx, for real.

The file's Redis, PostgreSQL and nginx are registry images (``redis:7-alpine``,
``postgres:16-alpine``, ``nginx:1.27-alpine``). Where one cannot be pulled (no
registry reachable, as on docker-here machines and CI), a stand-in is built
from Debian's packages on the local base image (tests/docker/standins/) and
passed in through the file's ``AGENTHOST_*_IMAGE`` variables.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.docker.engine import REPO, docker, free_port, inspect, require_engine

pytestmark = pytest.mark.docker

PROJECT = "agenthost-pytest-scale"
STANDINS = REPO / "tests" / "docker" / "standins"
# Variable of compose.scale.yaml -> (registry image, stand-in Dockerfile).
SERVICE_IMAGES = {
    "AGENTHOST_REDIS_IMAGE": ("redis:7-alpine", "redis"),
    "AGENTHOST_POSTGRES_IMAGE": ("postgres:16-alpine", "postgres"),
    "AGENTHOST_NGINX_IMAGE": ("nginx:1.27-alpine", "nginx"),
}


def compose(*args: str, env: dict[str, str], timeout: float = 300) -> str:
    done = docker(
        "compose", "--project-name", PROJECT, "--file", "compose.scale.yaml", *args,
        timeout=timeout, env=env,
    )  # fmt: skip
    return done.stdout + done.stderr


def service_images() -> dict[str, str]:
    """Each service's image: the registry's when present or pullable, else a stand-in built now."""
    chosen = {}
    for variable, (name, standin) in SERVICE_IMAGES.items():
        if docker("image", "inspect", name, check=False).returncode == 0:
            chosen[variable] = name
            continue
        if docker("pull", "--quiet", name, check=False, timeout=120).returncode == 0:
            chosen[variable] = name
            continue
        tag = f"agenthost-standin/{standin}:pytest"
        docker(
            "build", "--quiet", "--tag", tag, "--file", str(STANDINS / f"{standin}.Dockerfile"),
            str(STANDINS), timeout=900,
        )  # fmt: skip
        chosen[variable] = tag
    return chosen


@pytest.fixture(scope="module")
def balancer(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, str]]]:
    """compose.scale.yaml up and healthy (``--wait``); nginx's URL on a free loopback port."""
    require_engine()
    images = service_images()
    image: str = request.getfixturevalue("image")
    port = free_port()
    env = (
        os.environ
        | images
        | {
            "AGENTHOST_IMAGE": image,
            "AGENTHOST_SCALE_PUBLISH": f"127.0.0.1:{port}",
        }
    )
    try:
        compose("up", "--detach", "--wait", "--wait-timeout", "300", "--no-build", env=env)
        yield f"http://127.0.0.1:{port}", env
    finally:
        compose("down", "--volumes", "--timeout", "40", env=env)


def served_by(replica: str, env: dict[str, str], path: str) -> int:
    """How many requests for ``path`` the replica's log shows."""
    return compose("logs", replica, env=env).count(path)


def test_only_the_scale_services_run(balancer: tuple[str, dict[str, str]]) -> None:
    _, env = balancer
    running = set(compose("ps", "--services", env=env).split())
    assert running == {"redis", "postgres", "replica-1", "replica-2", "lb"}


def test_a_responses_chain_continues_through_the_load_balancer(
    balancer: tuple[str, dict[str, str]],
) -> None:
    url, env = balancer
    previous = None
    for turn in range(16):
        body = {"model": "echo", "input": f"turn {turn}", "store": True}
        if previous is not None:
            body["previous_response_id"] = previous
        answer = httpx.post(f"{url}/v1/responses", json=body, timeout=60)
        # nginx picks a replica at random: turns continue what the other one stored.
        assert answer.status_code == 200, answer.text
        previous = answer.json()["id"]
    for replica in ("replica-1", "replica-2"):
        # 16 turns at random: fewer than 2 on one replica has odds of 1 in 2,000.
        assert served_by(replica, env, "POST /v1/responses") >= 2, replica


def _kill_the_server(container: str) -> None:
    """SIGKILL agenthost inside the container, as a crash or the OOM killer would."""
    script = (
        "import os\n"
        "for p in os.listdir('/proc'):\n"
        "    if p.isdigit() and int(p) > 1:\n"
        "        try: cmd = open(f'/proc/{p}/cmdline', 'rb').read()\n"
        "        except OSError: continue\n"
        "        if b'agenthost' in cmd: os.kill(int(p), 9)\n"
    )
    docker("exec", container, "python", "-c", script, check=False)


class Traffic:
    """GET /v1/models through nginx in a loop, in a thread: each status and duration."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.results: list[tuple[int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        with httpx.Client(timeout=70) as client:
            while not self._stop.is_set():
                started = time.monotonic()
                try:
                    status = client.get(f"{self.url}/v1/models").status_code
                except httpx.TransportError:
                    status = 0
                self.results.append((status, time.monotonic() - started))
                time.sleep(0.05)

    def __enter__(self) -> Traffic:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def check(self) -> str:
        """Fail on any error or any request over 5 s; a summary otherwise."""
        failed = [r for r in self.results if r[0] != 200]
        slowest = max(seconds for _, seconds in self.results)
        assert not failed, f"{len(failed)} of {len(self.results)} failed: {failed[:5]}"
        assert slowest < 5, f"slowest request {slowest:.1f} s"
        return f"{len(self.results)} requests, slowest {slowest:.2f} s"


def _address(container: str) -> str:
    address: str = next(iter(inspect(container)["NetworkSettings"]["Networks"].values()))[
        "IPAddress"
    ]
    return address


def _wait_healthy(container: str, restarts: int = 0) -> None:
    deadline = time.monotonic() + 120
    while True:
        state = inspect(container)
        health = state["State"].get("Health", {}).get("Status")
        if state["RestartCount"] >= restarts and health == "healthy":
            return
        assert time.monotonic() < deadline, state["State"]
        time.sleep(1)


def test_a_crashed_replica_costs_no_request_over_5_s_and_comes_back(
    balancer: tuple[str, dict[str, str]],
) -> None:
    url, env = balancer
    (container,) = compose("ps", "--quiet", "replica-1", env=env).split()
    before = _address(container)
    with Traffic(url) as traffic:
        time.sleep(1)
        _kill_the_server(container)
        # Back: restarted by its policy, healthy, and in nginx's DNS answer again.
        _wait_healthy(container, restarts=1)
        time.sleep(6)  # nginx's cached answer (valid=5s) expires
    summary = traffic.check()
    print(f"crash: replica-1 address {before} -> {_address(container)}; {summary}")
    # The restarted replica serves again through nginx.
    since = served_by("replica-1", env, "GET /v1/models")
    for _ in range(20):
        assert httpx.get(f"{url}/v1/models", timeout=5).status_code == 200
    assert served_by("replica-1", env, "GET /v1/models") > since


def test_a_replica_that_stays_down_costs_no_request_over_5_s(
    balancer: tuple[str, dict[str, str]],
) -> None:
    url, env = balancer
    (container,) = compose("ps", "--quiet", "replica-2", env=env).split()
    try:
        with Traffic(url) as traffic:
            time.sleep(1)
            # `docker kill` counts as a manual stop: no restart, the address gone.
            docker("kill", container)
            time.sleep(12)
        print(f"down: {traffic.check()}")
    finally:
        docker("start", container, check=False)
        _wait_healthy(container)
