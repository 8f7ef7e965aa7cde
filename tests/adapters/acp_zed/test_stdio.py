"""``agenthost acp-stdio`` driven by the agent-client-protocol package's client side.

The command runs as a subprocess, as an editor starts it; the client spawns
it and talks JSON-RPC over its stdin and stdout. One process serves the
tests of this module (each in a session of its own): starting one costs
seconds.
"""

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    embedded_text_resource,
    resource_block,
    spawn_agent_process,
    text_block,
)
from acp.core import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from tests.adapters.approvals import QUESTION, RAN, WAS_DECLINED
from tests.prometheus import samples, value
from tests.upstream import FakeUpstream, free_port

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ROOT = Path(__file__).parents[3]
CONFIG = """
agents:
  - {name: desk, import: "tests.adapters.acp_zed.sample_agents:desk"}
  - name: relay
    model: openai:slow
    model_settings: {base_url: "${UPSTREAM_URL:-http://127.0.0.1:9/v1}", api_key: x, max_retries: 0}
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class Recorder:
    """The client side: records every session update, by session."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.changed = asyncio.Event()
        self.choice: str | None = "allow"  # the permission prompt's answer (None: cancelled)
        self.permissions: list[tuple[str, Any, list[Any]]] = []

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((session_id, tool_call, options))
        if self.choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        chosen = AllowedOutcome(outcome="selected", option_id=self.choice)
        return RequestPermissionResponse(outcome=chosen)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    def of(self, session: str, kind: type = object) -> list[Any]:
        return [u for s, u in self.updates if s == session and isinstance(u, kind)]

    def text(self, session: str) -> str:
        chunks = self.of(session, AgentMessageChunk)
        return "".join(c.content.text for c in chunks if isinstance(c.content, TextContentBlock))

    def clear(self, session: str) -> None:
        self.updates = [(s, u) for s, u in self.updates if s != session]

    async def wait_for(self, session: str, kind: type) -> Any:
        for _ in range(400):
            if found := self.of(session, kind):
                return found[0]
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), 0.05)
        raise AssertionError(f"no {kind.__name__} update came")


Served = tuple[ClientSideConnection, Recorder]


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("acp-zed") / "agents.yaml"
    path.write_text(CONFIG)
    return path


def _command(agent: str, config: Path) -> list[str]:
    return [
        sys.executable,
        "-P",
        "-m",
        "agenthost.app",
        "acp-stdio",
        agent,
        "--config",
        str(config),
    ]


async def _spawn(agent: str, config: Path, env: dict[str, str]) -> AsyncIterator[Served]:
    recorder = Recorder()
    command, *args = _command(agent, config)
    environment = {**os.environ, **env}
    async with spawn_agent_process(
        recorder,  # type: ignore[arg-type]
        command,
        *args,
        cwd=ROOT,
        env=environment,
    ) as (conn, _):
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="tests", version="1"),
        )
        assert init.protocol_version == PROTOCOL_VERSION
        assert init.agent_capabilities is not None and init.agent_capabilities.load_session
        assert init.agent_info is not None and init.agent_info.title == agent
        yield conn, recorder


@pytest.fixture(scope="module")
def deletions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the desk's ``delete_file`` records each of its real calls."""
    return tmp_path_factory.mktemp("acp-zed-deletions") / "deleted"


@pytest.fixture(scope="module")
async def desk(config: Path, deletions: Path) -> AsyncIterator[Served]:
    async for served in _spawn("desk", config, {"DESK_DELETIONS": str(deletions)}):
        yield served


async def _session(conn: ClientSideConnection) -> str:
    return (await conn.new_session(cwd=str(ROOT), mcp_servers=[])).session_id


async def test_a_prompt_streams_the_answer_and_a_second_one_sees_the_first(desk: Served) -> None:
    conn, recorder = desk
    session = await _session(conn)
    first = await conn.prompt(session_id=session, prompt=[text_block("my name is Ada")])
    assert first.stop_reason == "end_turn"
    assert len(recorder.of(session, AgentMessageChunk)) > 1  # streamed in pieces
    assert recorder.text(session) == "my name is Ada"
    recorder.clear(session)
    second = await conn.prompt(session_id=session, prompt=[text_block("what is my name?")])
    assert second.stop_reason == "end_turn"
    assert recorder.text(session) == "my name is Ada | my name is Ada | what is my name?"
    # Another session starts afresh.
    other = await _session(conn)
    await conn.prompt(session_id=other, prompt=[text_block("hi")])
    assert recorder.text(other) == "hi"
    # session/load replays the first session's conversation.
    recorder.clear(session)
    await conn.load_session(cwd=str(ROOT), session_id=session, mcp_servers=[])
    kinds = [type(u) for u in recorder.of(session)]
    assert kinds == [UserMessageChunk, AgentMessageChunk] * 2


async def test_a_prompts_blocks_reach_the_model_apart(desk: Served) -> None:
    conn, recorder = desk
    session = await _session(conn)
    file = resource_block(embedded_text_resource("file:///notes.txt", "the notes"))
    prompt = [text_block("see file"), file, text_block("thanks")]
    await conn.prompt(session_id=session, prompt=prompt)  # type: ignore[arg-type]
    # desk answers with the text it was sent: each block a part of its own.
    framed = '<file uri="file:///notes.txt">\nthe notes\n</file>'
    assert recorder.text(session) == f"see file\n\n{framed}\n\nthanks"


async def test_the_agents_tool_calls_are_tool_call_updates(desk: Served) -> None:
    conn, recorder = desk
    session = await _session(conn)
    answer = await conn.prompt(session_id=session, prompt=[text_block("calculate 6*7")])
    assert answer.stop_reason == "end_turn"
    started = await recorder.wait_for(session, ToolCallStart)
    assert started.title == "calculator" and started.status == "in_progress"
    assert started.raw_input == {"expression": "6*7"}
    finished = await recorder.wait_for(session, ToolCallProgress)
    assert finished.tool_call_id == started.tool_call_id
    assert finished.status == "completed" and finished.raw_output == "42"
    assert recorder.text(session) == "Let me calculate.\n\nIt is 42."


async def test_a_question_ends_the_turn_and_the_next_prompt_answers_it(desk: Served) -> None:
    conn, recorder = desk
    session = await _session(conn)
    asked = await conn.prompt(session_id=session, prompt=[text_block("ask me")])
    assert asked.stop_reason == "end_turn" and recorder.text(session) == "What is your name?"
    recorder.clear(session)
    answered = await conn.prompt(session_id=session, prompt=[text_block("Ada")])
    assert answered.stop_reason == "end_turn"
    assert recorder.text(session) == "Nice to meet you, Ada."


@pytest.mark.parametrize(
    ("choice", "answer", "runs"),
    [("allow", RAN, 1), ("reject", WAS_DECLINED, 0), (None, WAS_DECLINED, 0)],
)
async def test_an_approval_is_a_permission_request_and_the_choice_decides(
    desk: Served, deletions: Path, choice: str | None, answer: str, runs: int
) -> None:
    conn, recorder = desk
    _deleted(deletions, forget=True)
    recorder.choice, recorder.permissions = choice, []
    session = await _session(conn)
    done = await conn.prompt(session_id=session, prompt=[text_block("tidy up")])
    [(asked_in, tool_call, options)] = recorder.permissions
    assert asked_in == session and tool_call.title == QUESTION
    assert [o.kind for o in options] == ["allow_once", "reject_once"]
    assert done.stop_reason == "end_turn" and recorder.text(session) == answer
    assert _deleted(deletions) == ["/tmp/notes.txt"] * runs


def _deleted(deletions: Path, *, forget: bool = False) -> list[str]:
    """The paths the desk's ``delete_file`` really deleted (``forget``: start afresh)."""
    ran = deletions.read_text().splitlines() if deletions.exists() else []
    if forget:
        deletions.unlink(missing_ok=True)
    return ran


async def test_unknown_sessions_and_empty_prompts_are_json_rpc_errors(desk: Served) -> None:
    conn, _ = desk
    session = await _session(conn)
    with pytest.raises(RequestError) as unknown:
        await conn.prompt(session_id="nope", prompt=[text_block("hi")])
    assert unknown.value.code == -32602
    with pytest.raises(RequestError) as empty:
        await conn.prompt(session_id=session, prompt=[])
    assert empty.value.code == -32602
    with pytest.raises(RequestError):
        await conn.load_session(cwd=str(ROOT), session_id="nope", mcp_servers=[])
    # The process goes on serving.
    answer = await conn.prompt(session_id=session, prompt=[text_block("still here")])
    assert answer.stop_reason == "end_turn"


async def test_cancel_stops_the_run_and_the_prompt_answers_cancelled(
    config: Path, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    before = fake.abandoned
    async for conn, recorder in _spawn("relay", config, {"UPSTREAM_URL": url}):
        session = await _session(conn)
        prompt = asyncio.create_task(conn.prompt(session_id=session, prompt=[text_block("go")]))
        await recorder.wait_for(session, AgentMessageChunk)  # the upstream is streaming now
        await conn.cancel(session_id=session)
        answer = await asyncio.wait_for(prompt, 10)
        assert answer.stop_reason == "cancelled"
        for _ in range(100):
            if fake.abandoned > before:
                break
            await asyncio.sleep(0.05)
        assert fake.abandoned == before + 1, "the upstream stream was not closed"


def test_stdout_carries_nothing_but_json_rpc(config: Path) -> None:
    process = subprocess.Popen(
        _command("desk", config),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdin and process.stdout
    watchdog = threading.Timer(60, process.kill)  # a hung read must not hang the suite
    watchdog.start()
    lines: list[str] = []

    def call(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert process.stdin and process.stdout
        request = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        while line := process.stdout.readline():
            lines.append(line)
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == id:
                return message
        raise AssertionError("stdout closed before the answer")

    try:
        call(0, "initialize", {"protocolVersion": PROTOCOL_VERSION})
        session = call(1, "session/new", {"cwd": str(ROOT), "mcpServers": []})["result"]
        prompt = [{"type": "text", "text": "noisy"}]
        answer = call(2, "session/prompt", {"sessionId": session["sessionId"], "prompt": prompt})
        rest, errors = process.communicate(timeout=30)  # closes stdin: the process ends
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
    assert answer["result"]["stopReason"] == "end_turn"
    assert process.returncode == 0 and rest == ""
    messages = [json.loads(line) for line in lines]
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    assert any(m.get("method") == "session/update" for m in messages)
    assert not any("noise" in line for line in lines)
    assert "noise from an agent module" in errors and "noise from a tool" in errors


@pytest.mark.parametrize(
    ("agent", "config_text", "message"),
    [
        ("nobody", CONFIG, "unknown agent 'nobody'"),
        ("desk", "agents: [{name: desk, model: nowhere}]", "unknown model"),
    ],
)
def test_a_bad_agent_or_config_exits_before_writing_stdout(
    tmp_path: Path, agent: str, config_text: str, message: str
) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text(config_text)
    done = subprocess.run(
        _command(agent, config), capture_output=True, text=True, cwd=ROOT, timeout=60, check=False
    )
    assert done.returncode == 2 and done.stdout == ""
    assert message in done.stderr


async def test_metrics_count_its_prompts_as_acp_zed(config: Path) -> None:
    port = free_port()
    async for conn, _ in _spawn("desk", config, {"AGENTHOST_METRICS_PORT": str(port)}):
        session = await _session(conn)
        for text in ("count me", "and me"):
            answer = await conn.prompt(session_id=session, prompt=[text_block(text)])
            assert answer.stop_reason == "end_turn"
        async with httpx.AsyncClient() as http:
            response = await http.get(f"http://127.0.0.1:{port}/metrics", timeout=30)
    assert response.status_code == 200
    all = samples(response.text)
    ran = value(all, "agenthost_requests_total", protocol="acp_zed", agent="desk", outcome="ok")
    assert ran == 2
    assert value(all, "agenthost_request_duration_seconds_count", protocol="acp_zed", agent="desk")
