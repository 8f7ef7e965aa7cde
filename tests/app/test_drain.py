"""One drain for every protocol: SIGTERM during a stream over A2A JSON-RPC
(SSE) or MCP (a tool call's SSE stream) lets it finish or end with the
protocol's own error event, never a cut body; the process exits 0."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.app.test_server import agenthost_serve

PACED = "agents:\n  - {name: paced, import: 'tests.app.sample_agents:paced'}\n"
A2A_STREAM = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendStreamingMessage",
    "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "go"}]}},
}
MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "paced", "arguments": {"message": "go"}, "_meta": {"progressToken": "p"}},
}
SSE = {"accept": "application/json, text/event-stream"}


def stream_through_sigterm(
    process: subprocess.Popen[bytes], url: str, body: dict[str, Any], headers: dict[str, str]
) -> list[dict[str, Any]]:
    """The SSE events of one POST, SIGTERM sent after the first; the body must end cleanly."""
    events: list[dict[str, Any]] = []
    with httpx.stream("POST", url, json=body, headers=headers, timeout=30) as reply:
        assert reply.status_code == 200, reply.read()
        for line in reply.iter_lines():  # a cut chunked body raises RemoteProtocolError
            if line.startswith("data:") and line[5:].strip():
                if not events:
                    process.send_signal(signal.SIGTERM)
                events.append(json.loads(line[5:]))
    assert process.wait(timeout=30) == 0
    return events


@pytest.mark.parametrize("grace", ["2"])
def test_sigterm_ends_an_a2a_json_rpc_stream_with_a_failed_status(
    tmp_path: Path, grace: str
) -> None:
    env = {"AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS": grace}
    with agenthost_serve(tmp_path, config=PACED, **env) as (process, url):
        headers = {**SSE, "A2A-Version": "1.0"}
        events = stream_through_sigterm(process, f"{url}/a2a/paced", A2A_STREAM, headers)
    assert len(events) > 3
    last = events[-1]["result"]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_FAILED", events[-1]
    assert "shutting down" in json.dumps(last)


@pytest.mark.parametrize("grace", ["2"])
def test_sigterm_ends_an_mcp_tool_call_stream_with_an_error_result(
    tmp_path: Path, grace: str
) -> None:
    env = {"AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS": grace}
    with agenthost_serve(tmp_path, config=PACED, **env) as (process, url):
        events = stream_through_sigterm(process, f"{url}/mcp", MCP_CALL, SSE)
    assert any(e.get("method") == "notifications/progress" for e in events)
    result = events[-1]["result"]
    assert events[-1]["id"] == 7 and result["isError"] is True
    assert "shutting down" in result["content"][0]["text"]


def test_sigterm_ends_an_a2a_http_json_stream_with_a_failed_status(tmp_path: Path) -> None:
    env = {"AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS": "2"}
    with agenthost_serve(tmp_path, config=PACED, **env) as (process, url):
        headers = {**SSE, "A2A-Version": "1.0"}
        body = A2A_STREAM["params"]
        events = stream_through_sigterm(process, f"{url}/a2a/paced/message:stream", body, headers)
    assert len(events) > 3
    last = events[-1]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_FAILED", events[-1]
    assert "shutting down" in json.dumps(last)


PACED10 = "agents:\n  - {name: paced10, import: 'tests.app.sample_agents:paced10'}\n"
# One 10 s stream per protocol and transport over HTTP: (path, body, headers).
TEN_SECOND_STREAMS: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "chat": (
        "/v1/chat/completions",
        {"model": "paced10", "messages": [{"role": "user", "content": "go"}], "stream": True},
        {},
    ),
    "responses": ("/v1/responses", {"model": "paced10", "input": "go", "stream": True}, {}),
    "a2a-jsonrpc": ("/a2a/paced10", A2A_STREAM, {**SSE, "A2A-Version": "1.0"}),
    "a2a-http-json": (
        "/a2a/paced10/message:stream",
        A2A_STREAM["params"],
        {**SSE, "A2A-Version": "1.0"},
    ),
    "mcp": ("/mcp", {**MCP_CALL, "params": {**MCP_CALL["params"], "name": "paced10"}}, SSE),
    "acp": (
        "/acp/runs",
        {
            "agent_name": "paced10",
            "input": [{"role": "user", "parts": [{"content": "go", "content_type": "text/plain"}]}],
            "mode": "stream",
        },
        SSE,
    ),
}


def collect_sse(
    url: str, body: dict[str, Any], headers: dict[str, str], first: threading.Event
) -> list[Any]:
    """The SSE data of one POST (``first`` set at the first); raises if the body is cut."""
    events: list[Any] = []
    with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as reply:
        assert reply.status_code == 200, reply.read()
        for line in reply.iter_lines():
            if line.startswith("data:") and line[5:].strip():
                data = line[5:].strip()
                events.append(data if data == "[DONE]" else json.loads(data))
                first.set()
    return events


def test_with_a_30_s_grace_ten_second_streams_on_every_protocol_finish(tmp_path: Path) -> None:
    env = {"AGENTHOST_GRACEFUL_SHUTDOWN_SECONDS": "30"}
    with (
        agenthost_serve(tmp_path, config=PACED10, **env) as (process, url),
        ThreadPoolExecutor(len(TEN_SECOND_STREAMS)) as pool,
    ):
        firsts = {name: threading.Event() for name in TEN_SECOND_STREAMS}
        streams = {
            name: pool.submit(collect_sse, url + path, body, headers, firsts[name])
            for name, (path, body, headers) in TEN_SECOND_STREAMS.items()
        }
        for name, first in firsts.items():
            assert first.wait(timeout=60), f"{name} sent nothing"
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        events = {name: future.result(timeout=90) for name, future in streams.items()}
        assert process.wait(timeout=60) == 0
        took = time.monotonic() - started
    everything = json.dumps(events)
    assert "shutting down" not in everything and "shutting_down" not in everything
    assert events["chat"][-1] == "[DONE]"
    assert (
        "".join(
            e["choices"][0]["delta"].get("content") or ""
            for e in events["chat"][:-1]
            if e["choices"]
        )
        == "word " * 100
    )
    assert events["responses"][-1]["type"] == "response.completed"
    jsonrpc = events["a2a-jsonrpc"][-1]["result"]
    assert "TASK_STATE_COMPLETED" in json.dumps(jsonrpc), jsonrpc
    assert "TASK_STATE_COMPLETED" in json.dumps(events["a2a-http-json"][-1])
    assert events["mcp"][-1]["id"] == 7 and events["mcp"][-1]["result"]["isError"] is False
    assert events["acp"][-1]["type"] == "run.completed"
    assert took < 30  # the streams' own 10 s, not the grace time
