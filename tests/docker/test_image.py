"""The image, built and run for real: hardened, every protocol answering, a clean stop."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.docker.engine import docker, inspect, run, wait_ready

pytestmark = pytest.mark.docker

NAME = "agenthost-pytest-image"
# Any non-root user, as a cluster that picks the uid does (the image's own is 10001).
USER = "54321:54321"


@pytest.fixture(scope="module")
def served(image: str) -> Iterator[str]:
    """One container for the module: read-only root, no capabilities, an arbitrary user."""
    base_url = run(image, NAME, "--user", USER)
    try:
        wait_ready(base_url, NAME)
        yield base_url
    finally:
        docker("rm", "--force", NAME, check=False)


def test_the_image_is_small_non_root_and_checks_its_port(image: str) -> None:
    config = inspect(image)
    # 597 MB with all that dependencies bring; 508 MB without what the server
    # never imports, and its bytecode (Dockerfile), on docker-here's 191 MB base.
    assert config["Size"] <= 550 * 1000 * 1000, f"{config['Size'] / 1e6:.0f} MB"
    assert config["Config"]["User"] == "10001:10001"
    assert config["Config"]["StopSignal"] == "SIGTERM"
    assert "AGENTHOST_PORT" in " ".join(config["Config"]["Healthcheck"]["Test"])
    env = dict(e.split("=", 1) for e in config["Config"]["Env"])
    assert env["AGENTHOST_PORT"] == "8000" and env["AGENTHOST_HOST"] == "0.0.0.0"
    # Runs in flight end before `docker stop` (10 s) kills the process.
    assert float(env["AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS"]) < 10


# What dependencies bring and the server never imports (Dockerfile): tools,
# and acp-sdk's PostgreSQL store.
NOT_SERVED = ("grpc_tools", "setuptools", "fastapi_cli", "fastapi_cloud_cli", "sentry_sdk",
              "typer", "rich", "pygments", "psycopg")  # fmt: skip


def test_no_build_tool_or_package_cache_is_left_in_it(image: str) -> None:
    script = (
        "! command -v uv && ! command -v strip && ! test -e /src"
        " && ! ls -A /root/.cache 2>/dev/null | grep -q ."
        ' && test -z "$(find /var/lib/apt/lists -type f ! -name lock)"'
        # Installed as a wheel: no .pth file points back at the sources.
        " && ! grep -sl /src /app/.venv/lib/python3*/site-packages/*.pth"
    )
    script += "".join(f" && ! python -c 'import {name}' 2>/dev/null" for name in NOT_SERVED)
    # What the A2A gRPC server and the ACP models need is still there.
    script += " && python -c 'import grpc.aio, agenthost.adapters.a2a.grpc_server, acp_sdk.models'"
    docker("run", "--rm", "--user", "0", "--entrypoint", "sh", image, "-c", script)


# Imports every agenthost module, as the builder's bytecode step does
# (deploy/docker/compile_imported.py), then checks each imported module's
# bytecode file against its source (PEP 552 header: flags, mtime, size).
BYTECODE_CHECK = """
import importlib, importlib.util, json, os, pkgutil, sys
import agenthost
missing = []
for module in pkgutil.walk_packages(agenthost.__path__, "agenthost."):
    if not module.name.endswith(".__main__"):
        try:
            importlib.import_module(module.name)
        except ImportError:
            missing.append(module.name)
stale, fresh = [], 0
for module in list(sys.modules.values()):
    source = getattr(module, "__file__", None) or ""
    if not (source.startswith("/app/.venv/") and source.endswith(".py")):
        continue
    try:
        with open(importlib.util.cache_from_source(source), "rb") as cached:
            header = cached.read(16)
    except OSError:
        stale.append(source)
        continue
    stat = os.stat(source)
    flags, mtime, size = (int.from_bytes(header[i : i + 4], "little") for i in (4, 8, 12))
    if flags == 0 and (mtime, size) == (int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF):
        fresh += 1
    else:
        stale.append(source)
unused = importlib.util.find_spec("sqlalchemy.dialects.mysql.base").origin
print(json.dumps({"missing": missing, "stale": stale, "fresh": fresh,
                  "unused_compiled": os.path.exists(importlib.util.cache_from_source(unused))}))
"""


def test_what_the_server_imports_is_compiled_and_the_rest_is_not(image: str) -> None:
    done = docker("run", "--rm", "--read-only", "--entrypoint", "python", image, "-c",
                  BYTECODE_CHECK)  # fmt: skip
    found = json.loads(done.stdout)
    # Every module, and llama.cpp's, but the framework factories full leaves out.
    assert sorted(found["missing"]) == [
        f"agenthost.agents.frameworks.{name}"
        for name in ("adk", "agent_framework", "beeai", "crewai")
    ]
    # Nothing to compile at start: a fresh bytecode file for each imported module.
    assert found["fresh"] > 2000 and found["stale"] == [], found["stale"][:10]
    # What nothing imports stays source only (Dockerfile: ~35 MB less).
    assert found["unused_compiled"] is False


def test_it_starts_read_only_as_non_root_and_is_healthy(served: str) -> None:
    state = inspect(NAME)
    assert state["HostConfig"]["ReadonlyRootfs"] is True
    assert state["HostConfig"]["CapDrop"] == ["ALL"]
    assert state["Config"]["User"] == USER
    assert httpx.get(f"{served}/readyz").json()["status"] == "ready"
    deadline = time.monotonic() + 40  # the health check runs every 10 s
    while inspect(NAME)["State"]["Health"]["Status"] != "healthy":
        assert time.monotonic() < deadline, inspect(NAME)["State"]["Health"]
        time.sleep(1)


def test_the_openai_api_answers_with_echo_and_the_embedded_model(served: str) -> None:
    for model in ("echo", "assistant"):
        answer = httpx.post(
            f"{served}/v1/chat/completions",
            json={"model": model, "messages": [{"role": "user", "content": "Say hello."}]},
            timeout=60,
        )
        assert answer.status_code == 200, answer.text
        text = answer.json()["choices"][0]["message"]["content"]
        assert text == "Say hello." if model == "echo" else text.strip()


def test_a2a_serves_a_card_and_answers_a_message(served: str) -> None:
    card = httpx.get(f"{served}/a2a/echo/.well-known/agent-card.json").json()
    assert card["name"] == "echo"
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "over A2A"}]}
    answer = httpx.post(
        f"{served}/a2a/echo",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
        headers={"A2A-Version": "1.0"},
    )
    task = answer.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "over A2A"}]


def test_mcp_lists_the_agents_as_tools(served: str) -> None:
    answer = httpx.post(
        f"{served}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"accept": "application/json, text/event-stream"},
    )
    assert answer.status_code == 200, answer.text
    assert '"name":"echo"' in answer.text and '"name":"assistant"' in answer.text


def test_acp_runs_an_agent(served: str) -> None:
    answer = httpx.post(
        f"{served}/acp/runs",
        json={"agent_name": "echo", "input": [{"parts": [{"content": "over ACP"}]}]},
    )
    run = answer.json()
    assert run["status"] == "completed", run
    assert run["output"][0]["parts"][0]["content"] == "over ACP"


def test_docker_stop_exits_0_within_the_drain_time(image: str) -> None:
    name = f"{NAME}-stop"
    base_url = run(image, name)
    try:
        wait_ready(base_url, name)
        started = time.monotonic()
        docker("stop", name, timeout=30)  # docker's default: SIGKILL after 10 s
        took = time.monotonic() - started
        state = inspect(name)["State"]
        assert state["ExitCode"] == 0 and not state["OOMKilled"]
        assert took < 10, f"docker stop took {took:.1f} s"
    finally:
        docker("rm", "--force", name, check=False)
