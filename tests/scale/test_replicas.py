"""Two real agenthost replicas over one real Redis and one real PostgreSQL.

Requests alternate between the replicas (no stickiness): every stateful
surface continues on the other replica as if there were one process.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp_sdk.client import Client as ACPClient
from acp_sdk.models import MessagePartEvent, RunCompletedEvent, RunCreatedEvent, RunStatus

from tests.commands import wait_ready
from tests.stores import RedisServer, postgres_url, redis  # noqa: F401 (fixtures)
from tests.upstream import free_port

CONFIG = (
    "agents:\n  - {name: recall, import: 'tests.scale.replica_agents:recall'}\n"
    "  - {name: paced, import: 'tests.scale.replica_agents:paced'}\n"
)
V1 = {"A2A-Version": "1.0"}
MCP = {"accept": "application/json, text/event-stream"}
LEASE = 2.0  # seconds a run's lease lasts unless its replica refreshes it


class Replica:
    """One ``agenthost serve`` process; it can be killed and started again on its port."""

    def __init__(self, folder: Path, env: dict[str, str], config: str = CONFIG) -> None:
        self.config = folder / "agents.yaml"
        self.config.write_text(config)
        self.port = free_port()
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [sys.executable, "-P", "-m", "agenthost.app", "serve"]
        command += ["--config", str(self.config), "--port", str(self.port)]
        self.process = subprocess.Popen(
            command, env={**os.environ, **self.env}, cwd=Path(__file__).parents[2]
        )
        wait_ready(self.process, self.url)

    def terminate(self) -> None:
        """SIGTERM, as a rolling deploy stops it; returns once it exited."""
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)
            self.process = None

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=30)
            self.process = None


@contextmanager
def replicas(
    folder: Path, count: int, *, config: str = CONFIG, **env: str
) -> Iterator[list[Replica]]:
    settings = {
        "AGENTHOST_ADAPTERS": "openai,a2a,mcp,acp",
        "AGENTHOST_A2A_GRPC_PORT": "0",
        **env,
    }
    started = []
    with ExitStack() as stack:
        for index in range(count):
            sub = folder / f"replica-{index}"
            sub.mkdir()
            replica = Replica(sub, settings, config)
            stack.callback(replica.kill)
            started.append(replica)
        with ThreadPoolExecutor(count) as pool:
            list(pool.map(Replica.start, started))
        yield started


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory,
    redis: RedisServer,  # noqa: F811
    postgres_url: str,  # noqa: F811
) -> Iterator[list[Replica]]:
    folder = tmp_path_factory.mktemp("replicas")
    cancelled = folder / "cancelled"
    cancelled.mkdir()
    with replicas(
        folder,
        2,
        AGENTHOST_SESSION_STORE=redis.url,
        AGENTHOST_A2A_TASK_STORE=postgres_url,
        AGENTHOST_RUN_LEASE_SECONDS=str(LEASE),
        RECALL_CANCELLED=str(cancelled),
    ) as started:
        yield started


def stopped(pair: list[Replica], tag: str) -> bool:
    """Whether the run "slow <tag>" was stopped (its model call cancelled) within 10 s."""
    mark = pair[0].config.parents[1] / "cancelled" / tag
    deadline = time.monotonic() + 10
    while not mark.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def alternate(pair: list[Replica]) -> Iterator[str]:
    return itertools.cycle(replica.url for replica in pair)


def test_a_responses_chain_continues_on_either_replica(pair: list[Replica]) -> None:
    urls = alternate(pair)
    previous = None
    for turn in range(6):
        body: dict[str, Any] = {"model": "recall", "input": f"r{turn}"}
        if previous:
            body["previous_response_id"] = previous
        answer = httpx.post(f"{next(urls)}/v1/responses", json=body, timeout=30)
        assert answer.status_code == 200, answer.text
        response = answer.json()
        assert response["output"][-1]["content"][0]["text"] == " | ".join(
            f"r{i}" for i in range(turn + 1)
        )
        previous = response["id"]
    for url in (pair[0].url, pair[1].url):
        assert httpx.get(f"{url}/v1/responses/{previous}").status_code == 200


def test_a_conversation_continues_on_either_replica(pair: list[Replica]) -> None:
    urls = alternate(pair)
    created = httpx.post(f"{next(urls)}/v1/conversations", json={}).json()
    for turn in range(4):
        body = {"model": "recall", "input": f"c{turn}", "conversation": created["id"]}
        answer = httpx.post(f"{next(urls)}/v1/responses", json=body, timeout=30)
        assert answer.status_code == 200, answer.text
        text = answer.json()["output"][-1]["content"][0]["text"]
        assert text == " | ".join(f"c{i}" for i in range(turn + 1))
    items = httpx.get(f"{next(urls)}/v1/conversations/{created['id']}/items").json()["data"]
    assert len(items) == 8


def test_concurrent_conversation_appends_across_replicas_lose_nothing(
    pair: list[Replica],
) -> None:
    created = httpx.post(f"{pair[0].url}/v1/conversations", json={}).json()

    def add(index: int) -> int:
        item = {"type": "message", "role": "user", "content": f"item {index}"}
        url = pair[index % 2].url
        body = {"items": [item]}
        return httpx.post(
            f"{url}/v1/conversations/{created['id']}/items", json=body, timeout=30
        ).status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(add, range(40))) == {200}
    url = f"{pair[1].url}/v1/conversations/{created['id']}/items"
    items = httpx.get(url, params={"limit": 100}).json()["data"]
    texts = sorted(item["content"][0]["text"] for item in items)
    assert texts == sorted(f"item {i}" for i in range(40))


def _a2a_send(url: str, text: str, context: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if context:
        message["contextId"] = context
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    answer = httpx.post(f"{url}/a2a/recall", json=body, headers=V1, timeout=30)
    result: dict[str, Any] = answer.json()["result"]["task"]
    return result


def _a2a_call(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer: dict[str, Any] = httpx.post(
        f"{url}/a2a/recall", json=body, headers=V1, timeout=30
    ).json()
    return answer


def test_an_a2a_context_and_its_tasks_are_seen_from_either_replica(pair: list[Replica]) -> None:
    urls = alternate(pair)
    first = _a2a_send(next(urls), "a0")
    context = first["contextId"]
    tasks = [first["id"]]
    for turn in range(1, 4):
        task = _a2a_send(next(urls), f"a{turn}", context)
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        text = task["artifacts"][0]["parts"][0]["text"]
        assert text == " | ".join(f"a{i}" for i in range(turn + 1))
        tasks.append(task["id"])
    for url in (pair[0].url, pair[1].url):
        for id in tasks:
            got = _a2a_call(url, "GetTask", {"id": id})
            assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED", got
        listed = _a2a_call(url, "ListTasks", {"contextId": context})["result"]["tasks"]
        assert sorted(t["id"] for t in listed) == sorted(tasks)


def test_an_a2a_task_started_on_one_replica_is_cancelled_from_the_other(
    pair: list[Replica],
) -> None:
    tag = uuid.uuid4().hex
    text = f"slow {tag}"
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    started = _a2a_call(pair[0].url, "SendMessage", params)
    task = started["result"]["task"]
    deadline = time.monotonic() + 10
    while (
        _a2a_call(pair[1].url, "GetTask", {"id": task["id"]})["result"]["status"]["state"]
        != "TASK_STATE_WORKING"
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    cancelled = _a2a_call(pair[1].url, "CancelTask", {"id": task["id"]})
    assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED", cancelled
    assert stopped(pair, tag), "the run on the other replica went on"
    for url in (pair[0].url, pair[1].url):
        got = _a2a_call(url, "GetTask", {"id": task["id"]})
        assert got["result"]["status"]["state"] == "TASK_STATE_CANCELED"


def _mcp_call(url: str, message: str, session_id: str | None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"message": message}
    if session_id:
        arguments["session_id"] = session_id
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": arguments},
    }
    answer = httpx.post(f"{url}/mcp", json=body, headers=MCP, timeout=30)
    assert answer.status_code == 200, answer.text
    text = answer.text
    if text.startswith("event:") or text.startswith("data:"):
        text = next(
            line.removeprefix("data:").strip()
            for line in text.splitlines()
            if line.startswith("data:") and line.strip() != "data:"
        )
    result: dict[str, Any] = json.loads(text)["result"]
    return result


def test_an_mcp_session_id_conversation_continues_on_either_replica(
    pair: list[Replica],
) -> None:
    urls = alternate(pair)
    session = f"s-{uuid.uuid4().hex}"
    for turn in range(4):
        result = _mcp_call(next(urls), f"m{turn}", session)
        assert not result.get("isError"), result
        assert result["structuredContent"]["text"] == " | ".join(f"m{i}" for i in range(turn + 1))


def test_an_acp_session_continues_on_either_replica(pair: list[Replica]) -> None:
    urls = alternate(pair)
    session = str(uuid.uuid4())
    for turn in range(4):
        body = {
            "agent_name": "recall",
            "session_id": session,
            "input": [{"parts": [{"content": f"p{turn}"}]}],
        }
        run = httpx.post(f"{next(urls)}/acp/runs", json=body, timeout=30).json()
        assert run["status"] == "completed", run
        text = run["output"][0]["parts"][0]["content"]
        assert text == " | ".join(f"p{i}" for i in range(turn + 1))
    for url in (pair[0].url, pair[1].url):
        found = httpx.get(f"{url}/acp/sessions/{session}").json()
        assert len(found["history"]) == 8


def _acp_run(url: str, text: str, mode: str = "async") -> dict[str, Any]:
    body = {"agent_name": "recall", "mode": mode, "input": [{"parts": [{"content": text}]}]}
    answer = httpx.post(f"{url}/acp/runs", json=body, timeout=30)
    assert answer.status_code in (200, 202), answer.text
    run: dict[str, Any] = answer.json()
    return run


def _acp_wait(url: str, run_id: str, *states: str, seconds: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        run: dict[str, Any] = httpx.get(f"{url}/acp/runs/{run_id}").json()
        if run["status"] in states or time.monotonic() > deadline:
            return run
        time.sleep(0.05)


def test_an_acp_async_run_is_read_and_resumed_on_the_other_replica(pair: list[Replica]) -> None:
    run = _acp_run(pair[0].url, "ask me")
    waiting = _acp_wait(pair[1].url, run["run_id"], "awaiting")
    assert waiting["status"] == "awaiting", waiting
    assert "name" in waiting["await_request"]["message"]["parts"][0]["content"]
    resume = {
        "run_id": run["run_id"],
        "mode": "sync",
        "await_resume": {"message": {"parts": [{"content": "Ada"}]}},
    }
    resumed = httpx.post(f"{pair[1].url}/acp/runs/{run['run_id']}", json=resume, timeout=30)
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["status"] == "completed"
    done = _acp_wait(pair[0].url, run["run_id"], "completed")
    assert done["output"][-1]["parts"][-1]["content"].endswith("Nice to meet you, Ada.")
    events = httpx.get(f"{pair[0].url}/acp/runs/{run['run_id']}/events").json()["events"]
    assert [e["type"] for e in events][-1] == "run.completed"


def test_an_acp_run_working_on_one_replica_is_cancelled_from_the_other(
    pair: list[Replica],
) -> None:
    tag = uuid.uuid4().hex
    run = _acp_run(pair[0].url, f"slow {tag}")
    assert _acp_wait(pair[1].url, run["run_id"], "in-progress")["status"] == "in-progress"
    cancelling = httpx.post(f"{pair[1].url}/acp/runs/{run['run_id']}/cancel")
    assert cancelling.status_code == 202, cancelling.text
    # The replica running it stops the run (its task, the model's 60 s sleep).
    for url in (pair[1].url, pair[0].url):
        cancelled = _acp_wait(url, run["run_id"], "cancelled")
        assert cancelled["status"] == "cancelled", cancelled
    assert stopped(pair, tag)


def test_a_killed_replica_loses_no_conversation_and_its_run_completes_on_the_other(
    pair: list[Replica],
) -> None:
    body: dict[str, Any] = {"model": "recall", "input": "k0"}
    first = httpx.post(f"{pair[0].url}/v1/responses", json=body, timeout=30).json()
    text = f"nap 5 {uuid.uuid4().hex}"
    run = _acp_run(pair[0].url, text)
    assert _acp_wait(pair[1].url, run["run_id"], "in-progress")["status"] == "in-progress"
    # While its replica lives, the lease is refreshed: still working after 1.5 leases.
    time.sleep(LEASE * 1.5)
    assert httpx.get(f"{pair[1].url}/acp/runs/{run['run_id']}").json()["status"] == "in-progress"
    pair[0].kill()
    try:
        body = {"model": "recall", "input": "k1", "previous_response_id": first["id"]}
        second = httpx.post(f"{pair[1].url}/v1/responses", json=body, timeout=30).json()
        assert second["output"][-1]["content"][0]["text"] == "k0 | k1"
        # The run it was running (an async run, a durable one): taken over by the other
        # replica once its lease expires, and finished there; not failed, nor in-progress
        # until its TTL.
        # A lease, a claim tick and the 5 s nap again: ~8 s idle; a minute under CI's load
        # (seen: 20 s was not enough while the Docker engine was being built beside it).
        done = _acp_wait(pair[1].url, run["run_id"], "completed", "failed", seconds=60)
        assert done["status"] == "completed", done
        assert done["output"][0]["parts"][0]["content"] == text
        events = httpx.get(f"{pair[1].url}/acp/runs/{run['run_id']}/events").json()["events"]
        assert events[-1]["type"] == "run.completed"
    finally:
        pair[0].start()
    body = {"model": "recall", "input": "k2", "previous_response_id": second["id"]}
    third = httpx.post(f"{pair[0].url}/v1/responses", json=body, timeout=30).json()
    assert third["output"][-1]["content"][0]["text"] == "k0 | k1 | k2"
    # Every replica now reads the run completed (the restarted one included).
    assert httpx.get(f"{pair[0].url}/acp/runs/{run['run_id']}").json()["status"] == "completed"


@pytest.mark.anyio
async def test_an_acp_stream_run_is_followed_from_the_other_replica(pair: list[Replica]) -> None:
    async with (
        ACPClient(base_url=f"{pair[0].url}/acp", timeout=30) as owner,
        ACPClient(base_url=f"{pair[1].url}/acp", timeout=30) as other,
    ):
        stream = owner.run_stream("go", agent="paced")
        first = await anext(stream)
        assert isinstance(first, RunCreatedEvent)
        run_id = first.run.run_id
        rest = asyncio.create_task(_collect(stream))
        # While it streams on its replica, the other one shows its text parts as they come.
        deadline = time.monotonic() + 20
        while True:
            parts = [e async for e in other.run_events(run_id=run_id)]
            status = (await other.run_status(run_id=run_id)).status
            if sum(isinstance(e, MessagePartEvent) for e in parts) >= 2:
                break
            assert time.monotonic() < deadline, "no text parts shared while the run streams"
            await asyncio.sleep(0.1)
        assert status == RunStatus.IN_PROGRESS and not rest.done()
        streamed = [first, *await rest]
        assert isinstance(streamed[-1], RunCompletedEvent)
        followed = [e async for e in other.run_events(run_id=run_id)]
    assert [e.type for e in followed] == [e.type for e in streamed]
    text = "".join(str(e.part.content) for e in followed if isinstance(e, MessagePartEvent))
    assert text == "".join(f"w{i} " for i in range(10))


async def _collect(stream: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in stream]


def test_an_a2a_subscription_on_one_replica_follows_a_task_running_on_the_other(
    pair: list[Replica],
) -> None:
    tag = uuid.uuid4().hex
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": f"slow {tag}"}],
    }
    params = {"message": message, "configuration": {"returnImmediately": True}}
    task = _a2a_call(pair[0].url, "SendMessage", params)["result"]["task"]
    deadline = time.monotonic() + 10
    while (
        _a2a_call(pair[0].url, "GetTask", {"id": task["id"]})["result"]["status"]["state"]
        != "TASK_STATE_WORKING"
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    seen: list[str] = []

    def follow() -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "SubscribeToTask",
            "params": {"id": task["id"]},
        }
        headers = {**V1, "accept": "text/event-stream"}
        url = f"{pair[1].url}/a2a/recall"
        with httpx.stream("POST", url, json=body, headers=headers, timeout=30) as answer:
            for line in answer.iter_lines():
                if line.startswith("data:"):
                    seen.append(line)
                    if "TASK_STATE_CANCELED" in line or '"error"' in line:
                        return

    with ThreadPoolExecutor(1) as pool:
        subscription = pool.submit(follow)
        deadline = time.monotonic() + 10
        while not seen and time.monotonic() < deadline:
            time.sleep(0.05)  # the subscription's first event: the task as it is
        cancelled = _a2a_call(pair[0].url, "CancelTask", {"id": task["id"]})
        assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED", cancelled
        subscription.result(timeout=30)
    assert seen and "TASK_STATE_WORKING" in seen[0], seen
    assert "TASK_STATE_CANCELED" in seen[-1], seen


def test_a_stateless_elicitation_is_answered_through_the_other_replica(
    pair: list[Replica],
) -> None:
    """The call's elicitation request goes out on replica 0's stream; the client's
    answer (a POST of its own) lands on replica 1, which relays it."""
    headers = {**MCP, "MCP-Protocol-Version": "2025-11-25"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    # Told on replica 1, known on replica 0 once the relay has carried it there.
    assert httpx.post(f"{pair[1].url}/mcp", json=hello, headers=headers).status_code == 200
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": {"message": "ask"}},
    }
    deadline = time.monotonic() + 30
    while True:
        with httpx.stream(
            "POST", f"{pair[0].url}/mcp", json=call, headers=headers, timeout=60
        ) as response:
            events = (
                json.loads(line[5:])
                for line in response.iter_lines()
                if line.startswith("data:") and line[5:].strip()
            )
            first = next(events)
            if "method" not in first:  # not yet told: the question is the result
                assert first["result"]["structuredContent"]["status"] == "input_required"
                assert time.monotonic() < deadline, "replica 0 never learnt the capabilities"
                continue
            assert first["method"] == "elicitation/create"
            answer = {"action": "accept", "content": {"answer": "Ada"}}
            reply = {"jsonrpc": "2.0", "id": first["id"], "result": answer}
            relayed = httpx.post(f"{pair[1].url}/mcp", json=reply, headers=headers)
            assert relayed.status_code == 202, relayed.text
            result = next(events)
            break
    assert result["result"]["structuredContent"]["text"] == "Nice to meet you, Ada."
