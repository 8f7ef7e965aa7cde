"""API keys never enter an image; compose hands them to the container as a secret at run time."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.docker.engine import REPO, build, docker, free_port, require_engine

pytestmark = pytest.mark.docker

KEYS_IMAGE = "agenthost:pytest-keys"
# Where a user following an old recipe (or habit) leaves keys: inside config/,
# which the Dockerfile copies.
PLANTED = ("config/keys.txt", "config/prod/keys.txt", "config/tls.key")
SECRET = "sk-planted-0123456789-never-in-an-image"


@pytest.fixture(scope="module")
def built_with_keys_in_config() -> Iterator[str]:
    """The image built while keys files sit in config/ (removed again afterwards)."""
    require_engine()
    planted = [REPO / path for path in PLANTED]
    existing = [path for path in planted if path.exists()]
    assert not existing, f"refusing to overwrite {existing}"
    try:
        for path in planted:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"alice:{SECRET}\n")
        build(KEYS_IMAGE)
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
        (REPO / "config" / "prod").rmdir()
    yield KEYS_IMAGE
    docker("rmi", KEYS_IMAGE, check=False)


def test_keys_files_in_config_are_not_in_the_image(built_with_keys_in_config: str) -> None:
    listing = docker(
        "run", "--rm", "--user", "0", "--entrypoint", "sh", built_with_keys_in_config, "-c",
        "find /app/config -type f | sort; grep -rl planted / --include='*keys*' "
        "--exclude-dir=proc --exclude-dir=sys 2>/dev/null; true",
    ).stdout.split()  # fmt: skip
    for path in PLANTED:
        assert f"/app/{path}" not in listing
    assert SECRET not in " ".join(listing)
    # What config/ is for still arrives.
    assert "/app/config/agents.yaml" in listing
    history = docker("history", "--no-trunc", built_with_keys_in_config).stdout
    assert SECRET not in history


def compose(project: str, *args: str, env: dict[str, str], timeout: float = 180) -> str:
    done = docker("compose", "--project-name", project, *args, timeout=timeout, env=env)
    return done.stdout + done.stderr


def test_the_compose_recipe_mounts_the_keys_file_as_a_secret(image: str, tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text("alice:sk-alice-0123456789abcdef\n")
    keys.chmod(0o644)  # the container's uid 10001 reads it; tmp_path itself is private
    port = free_port()
    project = "agenthost-pytest-keys"
    env = os.environ | {
        "AGENTHOST_IMAGE": image,
        "AGENTHOST_PUBLISH": f"127.0.0.1:{port}",
        "AGENTHOST_API_KEYS_SECRET": str(keys),
        "AGENTHOST_API_KEYS_FILE": "/run/secrets/api_keys",
    }
    try:
        compose(project, "up", "--detach", "--wait", "--wait-timeout", "120", "--no-build", env=env)
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        body = {"model": "echo", "messages": [{"role": "user", "content": "keyed"}]}
        assert httpx.post(url, json=body).status_code == 401
        answer = httpx.post(
            url, json=body, headers={"Authorization": "Bearer sk-alice-0123456789abcdef"}
        )
        assert answer.json()["choices"][0]["message"]["content"] == "keyed"
    finally:
        compose(project, "down", "--volumes", "--timeout", "40", env=env)
