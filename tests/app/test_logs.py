"""Request ids (X-Request-ID kept, echoed or made) and JSON log lines."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel, ScriptedModel
from agenthost.agents.models.testing import call
from agenthost.agents.tools import calculator
from agenthost.app.settings import Settings
from tests.app.conftest import Lines
from tests.app.test_server import ECHO_CONFIG
from tests.commands import serving
from tests.conftest import running
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio


async def test_a_request_id_is_kept_or_made() -> None:
    agents = {"echo": ChatAgent("echo", EchoModel())}
    async with running(agents, Settings(adapters=["openai", "mcp"])) as (_, http):
        kept = await http.get("/healthz", headers={"x-request-id": "abc-123"})
        made = await http.get("/v1/models")
        other = await http.get("/v1/models")
        unusable = await http.get("/healthz", headers={"x-request-id": "x" * 500})
        missing = await http.get("/nowhere", headers={"x-request-id": "lost-1"})
    assert kept.headers["x-request-id"] == "abc-123"
    assert len(made.headers["x-request-id"]) == 16
    assert made.headers["x-request-id"] != other.headers["x-request-id"]
    assert len(unusable.headers["x-request-id"]) == 16  # a client's id goes into our logs
    assert missing.status_code == 404 and missing.headers["x-request-id"] == "lost-1"


async def test_log_lines_of_a_request_carry_its_id_and_protocol(json_lines: Lines) -> None:
    model = ScriptedModel([call("calculator", '{"expression": "1+1"}'), "two"])
    agents = {"calc": ChatAgent("calc", model, tools=(calculator,))}
    async with running(agents, Settings(adapters=["openai"])) as (_, http):
        body = {"model": "calc", "messages": [{"role": "user", "content": "one plus one"}]}
        headers = {"x-request-id": "req-42"}
        response = await http.post("/v1/chat/completions", json=body, headers=headers)
    assert response.status_code == 200
    lines = [json.loads(line) for line in json_lines.lines]
    tool = next(line for line in lines if line["logger"] == "agenthost.agents.tools")
    assert tool["request_id"] == "req-42"
    assert tool["protocol"] == "openai"
    assert tool["level"] == "info"
    assert tool["tool_event"]["tool"] == "calculator"
    assert "tool=calculator" in tool["message"]
    assert tool["time"].endswith("+00:00")
    # Outside a request (start-up lines): no request fields.
    started = next(line for line in lines if line["message"].startswith("serving "))
    assert "request_id" not in started
    assert started["message"].startswith("serving 1 agent (calc) over openai at /v1")


KEY = "sk-proj-Zx81mQp4TtV9"


async def refuse_the_key(request: Request) -> JSONResponse:
    # What api.openai.com answers to a wrong key: it quotes the key back.
    key = request.headers["authorization"].removeprefix("Bearer ")
    error = {"message": f"Incorrect API key provided: {key}.", "code": "invalid_api_key"}
    return JSONResponse({"error": error}, 401)


def test_agenthost_serve_writes_json_lines(tmp_path: Path) -> None:
    upstream = Starlette(routes=[Route("/v1/chat/completions", refuse_the_key, methods=["POST"])])
    with serve_in_thread(upstream) as upstream_url:
        (tmp_path / "agents.yaml").write_text(
            ECHO_CONFIG + "  - name: locked\n    model: openai:gpt-4o-mini\n"
            f"    model_settings: {{base_url: '{upstream_url}/v1', api_key: {KEY}, "
            "max_retries: 0}\n"
        )
        env = {**os.environ, "AGENTHOST_LOG_FORMAT": "json"}
        with (tmp_path / "stderr").open("wb") as stderr:
            output = {"stdout": stderr, "stderr": stderr}
            with serving(tmp_path / "agents.yaml", env, **output) as (_, url):
                for model, status in (("echo", 200), ("locked", 502)):
                    body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
                    answer = httpx.post(f"{url}/v1/chat/completions", json=body)
                    assert answer.status_code == status, answer.text
    lines = [json.loads(line) for line in (tmp_path / "stderr").read_text().splitlines()]
    # The upstream's refusal is the operator's to fix: logged with its status, the hint
    # and the upstream's words (the key masked), not as a bare access line "502".
    (refused,) = [line for line in lines if line["logger"] == "agenthost.upstream"]
    assert refused["level"] == "warning"
    assert f"at {upstream_url}/v1/chat/completions answered 401" in refused["message"]
    assert "check OPENAI_API_KEY or model_settings.api_key" in refused["message"]
    assert "Incorrect API key provided: <redacted>" in refused["message"]
    assert not any(KEY in str(line) for line in lines)
    assert any(line["message"].startswith("serving 2 agents (echo, locked)") for line in lines)
    loggers = {line["logger"] for line in lines}
    assert {"agenthost", "uvicorn.error", "uvicorn.access"} <= loggers, loggers
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    assert any("POST /v1/chat/completions" in line["message"] for line in lines)
    # uvicorn's start-up lines carry a coloured copy of their message: terminals only.
    assert any(line["message"].startswith("Uvicorn running on") for line in lines)
    assert not any("color_message" in line for line in lines)
    assert not any("\x1b" in str(value) for line in lines for value in line.values())
