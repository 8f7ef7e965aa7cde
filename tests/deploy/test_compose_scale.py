"""compose.scale.yaml and compose.yaml as `docker compose config` resolves them (no engine)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).parents[2]
SCALE = ROOT / "compose.scale.yaml"
# The oldest Compose the files work with, as compose.yaml and docs/deploy.md state it.
MINIMUM = (2, 20)


def _compose() -> list[str]:
    if shutil.which("docker") is None:
        pytest.skip("the docker CLI (with compose) is not installed")
    version = subprocess.run(
        ["docker", "compose", "version", "--short"], capture_output=True, text=True, timeout=60
    )
    if version.returncode != 0:
        pytest.skip("the Compose v2 plugin is not installed (docker compose version failed)")
    return ["docker", "compose"]


def resolved(
    *files: Path, profiles: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> dict[str, Any]:
    """``docker compose config`` of ``files`` (compose.yaml if none), ``profiles``, ``env``."""
    command = _compose()
    for file in files:
        command += ["--file", str(file)]
    for profile in profiles:
        command += ["--profile", profile]
    done = subprocess.run(
        [*command, "config", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=os.environ | (env or {}),
    )
    config: dict[str, Any] = json.loads(done.stdout)
    return config


def test_the_scale_file_has_two_replicas_on_shared_stores_behind_nginx() -> None:
    config = resolved(SCALE)
    services = config["services"]
    # The single in-memory instance of compose.yaml is not part of it.
    assert set(services) == {"redis", "postgres", "replica-1", "replica-2", "lb"}
    assert config["name"] == "agenthost-scale"
    for name in ("replica-1", "replica-2"):
        replica = services[name]
        env = replica["environment"]
        assert env["AGENTHOST_SESSION_STORE"] == "redis://redis:6379/0"
        assert env["AGENTHOST_A2A_TASK_STORE"].startswith("postgresql+asyncpg://agenthost:")
        assert not replica.get("ports"), "replicas are reached through the load balancer only"
        assert set(replica["depends_on"]) == {"redis", "postgres"}
        # A killed replica comes back, and nginx finds it again by this alias.
        assert replica["restart"] == "unless-stopped"
        assert replica["networks"]["default"]["aliases"] == ["agenthost-replica"]
    lb = services["lb"]
    assert lb["ports"][0]["host_ip"] == "127.0.0.1"
    assert set(lb["depends_on"]) == {"replica-1", "replica-2"}
    assert "allkeys-lru" in services["redis"]["command"]


# What the replicas must share with compose.yaml's single instance.
SAME = ("image", "volumes", "read_only", "tmpfs", "cap_drop", "security_opt", "init",
        "stop_grace_period", "secrets")  # fmt: skip


def test_the_replicas_are_hardened_and_configured_like_the_single_instance() -> None:
    single = resolved()["services"]["agenthost"]
    replica = resolved(SCALE)["services"]["replica-1"]
    for key in SAME:
        assert replica.get(key) == single.get(key), key
    # Every setting of the single instance reaches the replicas too.
    missing = set(single["environment"]) - set(replica["environment"])
    assert missing <= {"OLLAMA_BASE_URL", "OLLAMA_MODEL"}, missing


def test_the_default_and_the_profiles_start_no_replica() -> None:
    assert set(resolved()["services"]) == {"agenthost"}
    profiled = resolved(profiles=("ollama", "tracing"))["services"]
    assert set(profiled) == {"agenthost", "ollama", "ollama-pull", "jaeger"}


def test_the_stated_compose_version_is_enough_for_the_files() -> None:
    # Merge tags (!reset 2.18+, !override 2.24.4+) would raise the minimum: none is used.
    for path in (ROOT / "compose.yaml", SCALE):
        text = path.read_text()
        assert not re.search(r"!(reset|override)\b", text), path.name
        assert "Compose 2.20 or newer" in text, path.name
    assert "Compose 2.20 or newer" in (ROOT / "docs" / "deploy.md").read_text()
    # And the Compose here is at least that (the files parse: the tests above).
    command = _compose()
    short = subprocess.run(
        [*command, "version", "--short"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    major, minor = (int(part) for part in short.lstrip("v").split(".")[:2])
    assert (major, minor) >= MINIMUM, short


def test_api_keys_reach_the_container_as_a_secret_not_through_config(tmp_path: Path) -> None:
    for path in (ROOT / "compose.yaml", SCALE):
        secrets = yaml.safe_load(path.read_text())["secrets"]
        assert secrets == {"api_keys": {"file": "${AGENTHOST_API_KEYS_SECRET:-/dev/null}"}}
    keys = tmp_path / "keys.txt"
    keys.write_text("alice:sk-alice-0123456789\n")
    for files in ((), (SCALE,)):
        config = resolved(*files, env={"AGENTHOST_API_KEYS_SECRET": str(keys)})
        assert config["secrets"]["api_keys"]["file"] == str(keys)
        assert all(
            s["secrets"] == [{"source": "api_keys", "target": "/run/secrets/api_keys"}]
            for name, s in config["services"].items()
            if name.startswith(("agenthost", "replica"))
        )
