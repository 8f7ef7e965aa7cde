"""One drain for every protocol: SIGTERM during a stream over A2A JSON-RPC
(SSE) or MCP (a tool call's SSE stream) lets it finish or end with the
protocol's own error event, never a cut body; the process exits 0."""

from __future__ import annotations

import json
import signal
import subprocess
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
