"""A real Docker engine, driven through the ``docker`` CLI (no project module is imported).

The tests skip when no engine answers, with the reason; with
``AGENTHOST_REQUIRE_DOCKER=1`` (CI, after ``docker-here.sh up``) they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).parents[2]
# The image under test; a tag of its own, so a user's agenthost:latest is untouched.
IMAGE = "agenthost:pytest"
SLIM_IMAGE = "agenthost:pytest-slim"


def docker(
    *args: str, timeout: float = 120, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``docker ARGS`` in the repository; on failure (with ``check``), an error with its output."""
    done = subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, cwd=REPO, env=env
    )
    if check and done.returncode != 0:
        output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        raise AssertionError(f"docker {' '.join(args)} -> {done.returncode}\n{output}")
    return done


def require_engine() -> None:
    """Skip (or fail, under AGENTHOST_REQUIRE_DOCKER=1) unless a Docker engine answers."""
    if shutil.which("docker") is None:
        reason = "no docker CLI on PATH"
    else:
        try:
            info = docker("info", "--format", "{{.ServerVersion}}", timeout=20, check=False)
        except subprocess.TimeoutExpired:
            reason = "docker info timed out"
        else:
            if info.returncode == 0:
                return
            reason = f"no Docker engine answers ({info.stderr.strip()[:200]})"
    reason += "; start one with ../shared/tools/docker-here.sh up"
    if os.environ.get("AGENTHOST_REQUIRE_DOCKER") == "1":
        pytest.fail(f"AGENTHOST_REQUIRE_DOCKER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def build(tag: str, *build_args: str) -> float:
    """``docker build`` of the repository's Dockerfile; the seconds it took."""
    args = [a for arg in build_args for a in ("--build-arg", arg)]
    started = time.monotonic()
    docker("build", "--quiet", "--tag", tag, *args, ".", timeout=1800)
    return time.monotonic() - started


def inspect(name: str) -> dict[str, Any]:
    """``docker inspect`` of one image or container."""
    (found,) = json.loads(docker("inspect", name).stdout)
    result: dict[str, Any] = found
    return result


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_ready(base_url: str, container: str, timeout: float = 120) -> float:
    """Seconds until ``/readyz`` answers 200; the container's logs if it never does."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            if httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                return time.monotonic() - started
        except httpx.TransportError:
            pass
        state = inspect(container)["State"]
        if not state["Running"]:
            break
        time.sleep(0.2)
    logs = docker("logs", "--tail", "40", container, check=False)
    raise AssertionError(f"{container} never got ready:\n{logs.stdout}\n{logs.stderr}")


def run(image: str, name: str, *options: str, command: tuple[str, ...] = ()) -> str:
    """Start a detached container the way a hardened deploy does; its base URL on loopback."""
    port = free_port()
    docker("rm", "--force", name, check=False)
    docker(
        "run", "--detach", "--name", name,
        "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
        "--publish", f"127.0.0.1:{port}:8000",
        *options, image, *command,
    )  # fmt: skip
    return f"http://127.0.0.1:{port}"
