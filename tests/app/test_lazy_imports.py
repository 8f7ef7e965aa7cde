"""A config of agenthost's own agents never imports the framework wrappers' SDKs.

They cost seconds of start-up and tens of MiB (bench/README.md, issue 24); the
registry loads its plugins only when an object needs one. Checked in a fresh
interpreter: the test process has imported them already.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.commands import ROOT, free_port, serve_command, serving, untraced_env

SCRIPT = """
import sys
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

create_app(Settings(config=sys.argv[1]))
frameworks = ("agents", "langgraph", "langchain_core", "pydantic_ai")
print(",".join(name for name in frameworks if name in sys.modules))
"""


def test_an_echo_config_imports_no_framework(tmp_path: Path) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - name: echo\n    description: Echo.\n    model: echo\n")
    done = subprocess.run(
        [sys.executable, "-P", "-c", SCRIPT, str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", f"imported at start-up: {done.stdout.strip()}"


STORES = """
import sys
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

create_app(Settings(config=sys.argv[1], a2a_task_store=sys.argv[2]))
import a2a.server.cluster
import a2a.server.tasks

modules = ("sqlalchemy", "a2a.server.tasks.database_task_store", "httpcore", "jsonschema", "jinja2")
print(",".join(name for name in modules if sys.modules.get(name) is not None))
exported = (a2a.server.tasks.DatabaseTaskStore, a2a.server.cluster.VersionedDatabaseTaskStore)
print(",".join(store.__module__ for store in exported))
"""


def run_stores(tmp_path: Path, task_store: str) -> list[str]:
    return run_fresh(tmp_path, STORES, task_store)


def run_fresh(tmp_path: Path, script: str, argument: str) -> list[str]:
    """The lines ``script`` prints in a fresh interpreter, given an echo config and ``argument``."""
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - name: echo\n    description: Echo.\n    model: echo\n")
    done = subprocess.run(
        [sys.executable, "-P", "-c", script, str(config), argument],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


def test_an_echo_config_imports_no_database_http_client_schema_or_template(
    tmp_path: Path,
) -> None:
    # SQLAlchemy (the SDK's database stores, the 0.3 models they import) and
    # httpcore (the webhook client's transport) cost a second of start-up;
    # jsonschema (typed MCP tools) and Jinja2 (prompt templates) some more.
    imported, exported = run_stores(tmp_path, "memory")
    assert imported == "", f"imported at start-up: {imported}"
    assert "database" not in exported, "the SDK's placeholders were expected"


def test_a_sqlite_task_store_loads_the_sdks_database_stores(tmp_path: Path) -> None:
    imported, exported = run_stores(tmp_path, f"sqlite:///{tmp_path}/tasks.db")
    assert imported == "sqlalchemy,a2a.server.tasks.database_task_store"
    assert exported == (
        "a2a.server.tasks.database_task_store,a2a.server.cluster.database_task_store"
    ), "the SDK's packages still export the placeholders"


PROTOCOLS = """
import sys
from agenthost.app import cli
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

assert cli.main(["check", "--config", sys.argv[1]]) == 0
create_app(Settings(config=sys.argv[1], adapters=sys.argv[2].split(",")))
import httpx

modules = ("mcp", "mcp_types", "a2a", "acp_sdk", "ag_ui", "rich", "pygments")
print(",".join(name for name in modules if sys.modules.get(name) is not None))
print(type(httpx.main).__name__)
# Every protocol's settings and config models are read (settings, schema), served or not.
protocols = ("openai", "a2a", "mcp", "acp", "ag_ui", "ai_sdk", "anthropic", "orchestrate")
loaded = [f"agenthost.adapters.{name}.settings" in sys.modules for name in protocols]
print(",".join(name for name, is_loaded in zip(protocols, loaded) if is_loaded))
"""


def run_protocols(tmp_path: Path, adapters: str) -> list[str]:
    return run_fresh(tmp_path, PROTOCOLS, adapters)[-3:]  # after `check`'s own lines


def test_a_protocol_not_served_is_not_imported(tmp_path: Path) -> None:
    # The stream keep-alive setting used to import the MCP SDK (1.3 s of
    # -X importtime) to reach its SSE writer, served or not. Each protocol's
    # settings and config models are loaded all the same: they import no SDK.
    imported, _, settings = run_protocols(tmp_path, "openai")
    assert imported == "", f"imported at start-up: {imported}"
    assert settings == "openai,a2a,mcp,acp,ag_ui,ai_sdk,anthropic,orchestrate"


def test_the_command_leaves_out_httpx_command_line_client(tmp_path: Path) -> None:
    # httpx imports click, rich and pygments for its CLI whenever they are
    # installed (acp-sdk installs them); `agenthost` never runs it.
    imported, main_type, _ = run_protocols(tmp_path, "openai,a2a,mcp,acp")
    assert imported.split(",") == ["a2a", "acp_sdk"]  # MCP: on its first request
    assert main_type == "function"  # httpx's stub; its CLI is a click Command


FIRST_USE = """
import asyncio
import sys

import httpx

from agenthost.app.server import create_app
from agenthost.app.settings import Settings

SDKS = ("mcp", "mcp_types", "ag_ui")
MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"message": "hello"}},
}
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}
RUN = {"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": "hi"}]}


def imported() -> str:
    return ",".join(name for name in SDKS if sys.modules.get(name) is not None)


async def main() -> None:
    app = create_app(Settings(config=sys.argv[1]))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            ready = await client.get("/readyz")
            print(ready.status_code, imported())
            # Two first calls at once: both wait for the one build.
            calls = [client.post("/mcp", json=MCP_CALL, headers=MCP_HEADERS) for _ in range(2)]
            answers = await asyncio.gather(*calls)
            run = await client.post("/ag-ui/echo", json=RUN)
            print(*(a.status_code for a in answers), run.status_code, imported())
            print(all('"isError":false' in a.text for a in answers), "RUN_FINISHED" in run.text)
            unknown = await client.post("/mcp/nowhere", json=MCP_CALL, headers=MCP_HEADERS)
            print(unknown.status_code, unknown.json()["error"]["code"])


asyncio.run(main())
"""


def test_mcp_and_ag_ui_import_their_sdks_on_their_first_request(tmp_path: Path) -> None:
    # The MCP SDK (two protocol revisions of pydantic models) and ag-ui-protocol
    # are about 40 % of a start-up's CPU (bench/startup.py): /readyz answers
    # before either is imported; each protocol's first request imports it.
    ready, first, answered, unknown = run_fresh(tmp_path, FIRST_USE, "")
    assert ready == "200 ", f"/readyz, then imported before any request: {ready}"
    assert first == "200 200 200 mcp,mcp_types,ag_ui"
    assert answered == "True True"
    assert unknown == "404 -32600"  # MCP's own error shape, from the built adapter's routes


DEFERRED_MODELS = """
import asyncio
import sys

import httpx

from agenthost.app.server import create_app
from agenthost.app.settings import Settings

app = create_app(Settings(config=sys.argv[1]))
from a2a.compat.v0_3 import types as v03
from fastapi.openapi import models as openapi
from pydantic import BaseModel
from pydantic._internal._config import config_defaults


def built(module: object) -> str:
    classes = [v for v in vars(module).values() if isinstance(v, type)]
    models = [v for v in classes if issubclass(v, BaseModel) and v.__module__ == module.__name__]
    return f"{sum(bool(m.__pydantic_complete__) for m in models)}/{len(models)}"


print(built(v03), built(openapi), config_defaults["defer_build"], "email_validator" in sys.modules)
CARD = {"name": "a", "description": "d", "url": "http://x", "version": "1", "capabilities": {},
        "defaultInputModes": [], "defaultOutputModes": [], "skills": []}
print(v03.AgentCard.model_validate(CARD).model_dump(exclude_none=True)["url"])


async def main() -> None:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            document = (await client.get("/openapi.json")).json()
            print(document["openapi"], "/v1/chat/completions" in document["paths"])


asyncio.run(main())
"""


def test_sdk_models_no_request_needs_at_start_up_are_built_on_first_use(tmp_path: Path) -> None:
    # The a2a-sdk's A2A 0.3 models (~100) and FastAPI's OpenAPI document models
    # were the largest groups of models a start-up built (bench/README.md, session 15).
    deferred, card, document = run_fresh(tmp_path, DEFERRED_MODELS, "")
    v03, openapi, default, email_validator = deferred.split()
    assert v03.startswith("0/") and int(v03.split("/")[1]) > 90, v03
    built, total = map(int, openapi.split("/"))
    assert total > 30 and built < 10, openapi  # a few are used to make the routes
    assert default == "False", "pydantic's default was not restored"
    assert email_validator == "False"
    assert card == "http://x"  # built by its first use, as it would have been at import
    assert document.startswith("3.") and document.endswith("True")


def test_a_served_process_builds_mcp_after_ready_without_a_request(tmp_path: Path) -> None:
    # MCP is deferred off the start-up path; the server builds it once it accepts
    # connections, so the first MCP request does not pay for the SDK's import.
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - name: echo\n    description: Echo.\n    model: echo\n")
    log = tmp_path / "server.log"
    env = untraced_env(AGENTHOST_LOG_LEVEL="info")
    with log.open("wb") as output, serving(config, env, stderr=output) as (_, url):
        deadline = time.monotonic() + 120
        while "mcp: built ahead of its first request" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.1)
        answer = httpx.post(
            f"{url}/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "hello"}},
            },
            headers={
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18",
            },
            timeout=60,
        )
    assert answer.status_code == 200
    assert '"isError":false' in answer.text


def test_a_served_process_nobody_probes_builds_mcp_after_a_second(tmp_path: Path) -> None:
    # No /readyz and no request: the fallback starts the build on its own, without an error.
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - name: echo\n    description: Echo.\n    model: echo\n")
    log = tmp_path / "server.log"
    port = free_port()
    env = untraced_env(AGENTHOST_LOG_LEVEL="info")
    with log.open("wb") as output:
        process = subprocess.Popen(serve_command(config, port), env=env, stderr=output, cwd=ROOT)
        try:
            deadline = time.monotonic() + 120
            while "mcp: built ahead of its first request" not in log.read_text():
                assert process.poll() is None, log.read_text()[-2000:]
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(0.1)
        finally:
            process.terminate()
            process.wait(timeout=30)
    text = log.read_text()
    assert "Traceback" not in text and " ERROR " not in text, text[-2000:]
