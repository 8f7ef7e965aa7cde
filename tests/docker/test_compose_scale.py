"""``docker compose --profile scale up``: two replicas behind nginx, one conversation across both.

The profile's Redis, PostgreSQL and nginx come from registry images
(``redis:7-alpine``, ``postgres:16-alpine``, ``nginx:1.27-alpine``). Where
they cannot be had (no registry reachable, as on docker-here machines), the
test is skipped with that reason, even under ``AGENTHOST_REQUIRE_DOCKER=1``:
the engine is there, the images are not.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import httpx
import pytest

from tests.docker.engine import docker, free_port, require_engine

pytestmark = pytest.mark.docker

PROJECT = "agenthost-pytest-scale"
SERVICE_IMAGES = ("redis:7-alpine", "postgres:16-alpine", "nginx:1.27-alpine")


def compose(*args: str, env: dict[str, str], timeout: float = 300) -> str:
    done = docker(
        "compose", "--project-name", PROJECT, "--profile", "scale", *args, timeout=timeout, env=env
    )
    return done.stdout + done.stderr


def _require_service_images() -> None:
    """Skip unless each service image is present or can be pulled now."""
    missing = []
    for name in SERVICE_IMAGES:
        if docker("image", "inspect", name, check=False).returncode == 0:
            continue
        pulled = docker("pull", "--quiet", name, check=False, timeout=120)
        if pulled.returncode != 0:
            why = (pulled.stderr.strip().splitlines() or ["docker pull failed"])[-1]
            missing.append(f"{name} ({why})")
    if missing:
        pytest.skip("the scale profile's images cannot be had: " + ", ".join(missing))


@pytest.fixture(scope="module")
def balancer(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, str]]]:
    """The scale profile up and healthy (``--wait``); nginx's URL on a free loopback port."""
    require_engine()
    _require_service_images()
    image: str = request.getfixturevalue("image")
    port = free_port()
    env = os.environ | {
        "AGENTHOST_IMAGE": image,
        "AGENTHOST_PUBLISH": f"127.0.0.1:{free_port()}",
        "AGENTHOST_SCALE_PUBLISH": f"127.0.0.1:{port}",
    }
    try:
        compose("up", "--detach", "--wait", "--wait-timeout", "240", "--no-build", env=env)
        yield f"http://127.0.0.1:{port}", env
    finally:
        compose("down", "--volumes", "--timeout", "40", env=env)


def test_a_responses_chain_continues_through_the_load_balancer(
    balancer: tuple[str, dict[str, str]],
) -> None:
    url, env = balancer
    previous = None
    for turn in range(6):
        body = {"model": "echo", "input": f"turn {turn}", "store": True}
        if previous is not None:
            body["previous_response_id"] = previous
        answer = httpx.post(f"{url}/v1/responses", json=body, timeout=60)
        # Round robin: every other turn reaches the replica that did not store the last one.
        assert answer.status_code == 200, answer.text
        previous = answer.json()["id"]
    for replica in ("replica-1", "replica-2"):
        logs = compose("logs", replica, env=env)
        assert logs.count("POST /v1/responses") >= 2, f"{replica} served no turn:\n{logs[-2000:]}"
