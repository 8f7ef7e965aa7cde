"""compose.yaml's ``scale`` profile, as ``docker compose config`` resolves it (no engine needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parents[2]


def resolved(*profiles: str) -> dict[str, Any]:
    if shutil.which("docker") is None:
        pytest.skip("the docker CLI (with compose) is not installed")
    command = ["docker", "compose"]
    for profile in profiles:
        command += ["--profile", profile]
    done = subprocess.run(
        [*command, "config", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    config: dict[str, Any] = json.loads(done.stdout)
    return config


def test_the_scale_profile_has_two_replicas_on_shared_stores_behind_nginx() -> None:
    services = resolved("scale")["services"]
    assert {"redis", "postgres", "replica-1", "replica-2", "lb"} <= set(services)
    for name in ("replica-1", "replica-2"):
        replica = services[name]
        env = replica["environment"]
        assert env["AGENTHOST_SESSION_STORE"] == "redis://redis:6379/0"
        assert env["AGENTHOST_A2A_TASK_STORE"].startswith("postgresql+asyncpg://agenthost:")
        assert not replica.get("ports"), "replicas are reached through the load balancer only"
        assert set(replica["depends_on"]) == {"redis", "postgres"}
        assert replica["read_only"] is True and replica["cap_drop"] == ["ALL"]
    lb = services["lb"]
    assert lb["ports"][0]["host_ip"] == "127.0.0.1"
    assert set(lb["depends_on"]) == {"replica-1", "replica-2"}
    assert "allkeys-lru" in services["redis"]["command"]


def test_the_load_balancer_does_not_buffer_streams_nor_stick() -> None:
    conf = (ROOT / "deploy/compose/nginx.conf").read_text()
    assert "proxy_buffering off;" in conf
    assert "server replica-1:8000;" in conf and "server replica-2:8000;" in conf
    assert "ip_hash" not in conf and "sticky" not in conf


def test_the_default_profile_is_unchanged() -> None:
    assert set(resolved()["services"]) == {"agenthost"}
