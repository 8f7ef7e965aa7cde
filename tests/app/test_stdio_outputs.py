"""The stdio commands whatever their stdout is: a file or a socket, not only a pipe.

An editor gives ``acp-stdio`` pipes; a shell may redirect its output to a
file (``acp-stdio AGENT > file``) and a supervisor may hand it a socket.
"""

import asyncio
import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.core import ClientSideConnection
from acp.schema import AgentMessageChunk, ClientCapabilities, Implementation

from tests.commands import agenthost

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = "agents:\n  - {name: echo, model: echo}\n"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stdio") / "agents.yaml"
    path.write_text(CONFIG)
    return path


def _request(id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode()


def _answers(
    out: Path, count: int, process: subprocess.Popen[bytes], until: int | None = None
) -> list[Any]:
    """The JSON-RPC lines the command wrote to ``out``: waits for ``count`` of them
    (and for the answer to request ``until``)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        answers = [json.loads(line) for line in out.read_text().splitlines()]
        if len(answers) >= count and (until is None or any(a.get("id") == until for a in answers)):
            return answers
        assert process.poll() is None, f"the command ended with {process.returncode}"
        time.sleep(0.05)
    raise AssertionError(f"no {count} answers in {out}: {out.read_text()!r}")


def test_acp_stdio_writes_its_answers_to_a_file(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    command = agenthost("acp-stdio", "echo", "--config", str(config))
    with out.open("wb") as file:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=file)
    assert process.stdin is not None
    try:
        init = _request(1, "initialize", {"protocolVersion": PROTOCOL_VERSION})
        new = _request(2, "session/new", {"cwd": str(tmp_path), "mcpServers": []})
        process.stdin.write(init + b"\n" + new + b"\n")
        process.stdin.flush()
        first, second = _answers(out, 2, process)[:2]
        assert first["result"]["agentInfo"]["title"] == "echo"
        session = second["result"]["sessionId"]
        prompt = [{"type": "text", "text": "into a file"}]
        process.stdin.write(_request(3, "session/prompt", {"sessionId": session, "prompt": prompt}))
        process.stdin.write(b"\n")
        process.stdin.flush()
        answers = _answers(out, 5, process, until=3)  # the word chunks, then the answer
        updates = [a["params"]["update"] for a in answers if "params" in a]
        chunks = [u["content"]["text"] for u in updates if u.get("content")]
        assert "".join(chunks) == "into a file"
        assert [a["result"]["stopReason"] for a in answers if a.get("id") == 3] == ["end_turn"]
        process.stdin.close()
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


class _Recorder:
    def __init__(self) -> None:
        self.text = ""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk):
            self.text += getattr(update.content, "text", "")


async def test_acp_stdio_speaks_over_a_socket(config: Path, tmp_path: Path) -> None:
    ours, theirs = socket.socketpair()
    command = agenthost("acp-stdio", "echo", "--config", str(config))
    process = subprocess.Popen(command, stdin=theirs.fileno(), stdout=theirs.fileno())  # noqa: ASYNC220 (a spawn)
    theirs.close()
    try:
        reader, writer = await asyncio.open_connection(sock=ours, limit=2**20)
        recorder = _Recorder()
        conn = ClientSideConnection(recorder, writer, reader)  # type: ignore[arg-type]
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="tests", version="1"),
        )
        session = (await conn.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=session, prompt=[text_block("over a socket")])
        assert answer.stop_reason == "end_turn"
        assert recorder.text == "over a socket"
        await conn.close()
        writer.close()
        assert await asyncio.to_thread(process.wait, 60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_mcp_stdio_writes_its_answers_to_a_file(config: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    command = agenthost("mcp-stdio", "--config", str(config))
    with out.open("wb") as file:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=file)
    assert process.stdin is not None
    try:
        client = {"name": "tests", "version": "1"}
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        process.stdin.write(_request(1, "initialize", init) + b"\n")
        process.stdin.write(json.dumps(initialized).encode() + b"\n")
        process.stdin.write(_request(2, "tools/list", {}) + b"\n")
        process.stdin.flush()
        _, listed = _answers(out, 2, process)[:2]
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["echo"]
        process.stdin.close()
        assert process.wait(60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
