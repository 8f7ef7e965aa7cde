"""``docker compose up`` with the default profile: healthy, answering, and gone after ``down``."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.docker.engine import docker, free_port, inspect

pytestmark = pytest.mark.docker

PROJECT = "agenthost-pytest"


def compose(*args: str, env: dict[str, str], timeout: float = 180) -> str:
    """``docker compose -p PROJECT ARGS`` on the repository's compose.yaml; its output."""
    done = docker("compose", "--project-name", PROJECT, *args, timeout=timeout, env=env)
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def stack(image: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The default profile, up and healthy (``--wait``), on a free loopback port."""
    port = free_port()
    env = os.environ | {"AGENTHOST_IMAGE": image, "AGENTHOST_PUBLISH": f"127.0.0.1:{port}"}
    try:
        compose("up", "--detach", "--wait", "--wait-timeout", "120", "--no-build", env=env)
        yield f"http://127.0.0.1:{port}", env
    finally:
        compose("down", "--volumes", "--timeout", "40", env=env)


def test_compose_up_reaches_healthy_and_answers(stack: tuple[str, dict[str, str]]) -> None:
    base_url, env = stack
    (container,) = compose("ps", "--quiet", env=env).split()
    state = inspect(container)
    assert state["State"]["Health"]["Status"] == "healthy"
    host = state["HostConfig"]
    assert host["ReadonlyRootfs"] and host["Init"] and host["CapDrop"] == ["ALL"]
    assert "no-new-privileges:true" in host["SecurityOpt"]
    # Loopback only: auth is off by default.
    (binding,) = host["PortBindings"]["8000/tcp"]
    assert binding["HostIp"] == "127.0.0.1"
    answer = httpx.post(
        f"{base_url}/v1/chat/completions",
        json={"model": "echo", "messages": [{"role": "user", "content": "composed"}]},
    )
    assert answer.json()["choices"][0]["message"]["content"] == "composed"
    assert httpx.get(f"{base_url}/readyz").json()["agents"] == 2


def test_compose_down_leaves_nothing_running(stack: tuple[str, dict[str, str]]) -> None:
    _, env = stack
    started = time.monotonic()
    compose("down", "--volumes", env=env)
    assert time.monotonic() - started < 15  # SIGTERM ends it: no kill after the grace period
    label = f"label=com.docker.compose.project={PROJECT}"
    assert docker("ps", "--all", "--quiet", "--filter", label).stdout.strip() == ""
    assert docker("network", "ls", "--quiet", "--filter", label).stdout.strip() == ""
