"""Durable IBM ACP runs across real replicas: an ``async`` or ``stream`` run outlives its replica.

Two ``agenthost serve`` processes share a real Redis (sessions, ACP run
snapshots and the run log) and PostgreSQL. An ACP run whose agent ran a
tool with a side effect (a counter in a file) and is streaming its answer
loses its replica to ``kill -9``. The other replica claims it once its
lease expires and resumes it from its last finished step: the tool is not
run again, ``GET /acp/runs/{id}`` shows it ``completed`` with the whole
answer on every replica, and ``GET /acp/runs/{id}/events`` shows what the
lost step had streamed as discarded (a ``generic`` event), then the rest.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp_sdk.models import Event, GenericEvent
from pydantic import TypeAdapter

from tests.scale.durable_agents import ANSWER
from tests.scale.test_replicas import Replica, replicas
from tests.stores import RedisServer, postgres_url, redis  # noqa: F401 (fixtures)

CONFIG = "agents:\n  - {name: counting, import: 'tests.scale.durable_agents:counting'}\n"
LEASE = 2.0
EVENTS: TypeAdapter[Event] = TypeAdapter(Event)


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory,
    redis: RedisServer,  # noqa: F811
    postgres_url: str,  # noqa: F811
) -> Iterator[tuple[list[Replica], Path]]:
    folder = tmp_path_factory.mktemp("durable-acp")
    counter = folder / "counter"
    with replicas(
        folder,
        2,
        config=CONFIG,
        AGENTHOST_SESSION_STORE=redis.url,
        AGENTHOST_A2A_TASK_STORE=postgres_url,
        AGENTHOST_RUN_LEASE_SECONDS=str(LEASE),
        DURABLE_COUNTER=str(counter),
    ) as started:
        yield started, counter


def _events(url: str, run_id: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{url}/acp/runs/{run_id}/events", timeout=10)
    assert answer.status_code == 200, answer.text
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


def _texts(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["part"]["content"]
        for e in events
        if e["type"] == "message.part" and e["part"]["metadata"] is None
    ]


def _until(check: Any, seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return found


def _output_text(run: dict[str, Any]) -> str:
    return "".join(
        part["content"]
        for message in run["output"]
        for part in message["parts"]
        if part["metadata"] is None
    )


def _start(url: str, mode: str) -> tuple[str, threading.Thread | None]:
    """Start a run of ``counting``; its id (and the thread reading a stream run's SSE)."""
    body = {"agent_name": "counting", "mode": mode, "input": [{"parts": [{"content": "go"}]}]}
    if mode == "async":
        answer = httpx.post(f"{url}/acp/runs", json=body, timeout=30)
        assert answer.status_code == 202, answer.text
        return answer.json()["run_id"], None
    started = threading.Event()
    found: list[str] = []

    def read() -> None:  # until its replica is killed
        try:
            with httpx.stream("POST", f"{url}/acp/runs", json=body, timeout=30) as answer:
                found.append(answer.headers["run-id"])
                started.set()
                for _ in answer.iter_lines():
                    pass
        except httpx.HTTPError:
            pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert started.wait(30)
    return found[0], reader


def _restart(replica: Replica) -> threading.Thread:
    """Start ``replica`` again, in a thread (join it before using the replica)."""
    thread = threading.Thread(target=replica.start, daemon=True)
    thread.start()
    return thread


def _ended(url: str, run_id: str) -> dict[str, Any]:
    """The run once it ended (or awaits its client), read from ``url``."""

    def read() -> dict[str, Any] | None:
        run: dict[str, Any] = httpx.get(f"{url}/acp/runs/{run_id}").json()
        return run if run["status"] not in ("created", "in-progress", "cancelling") else None

    found: dict[str, Any] = _until(read)
    return found


@pytest.mark.parametrize("mode", ["async", "stream"])
def test_a_run_resumes_on_the_other_replica_without_running_its_tool_again(
    pair: tuple[list[Replica], Path], mode: str
) -> None:
    (owner, other), counter = pair
    counter.unlink(missing_ok=True)
    run_id, reader = _start(owner.url, mode)
    # The other replica shows it working: the tool ran, the answer is under way.
    _until(lambda: "w1 " in _texts(_events(other.url, run_id)))
    assert counter.read_text() == "1"
    owner.kill()
    killed = time.monotonic()
    restart = _restart(owner)  # meanwhile (whichever replica claims the run resumes it)
    try:
        done = _ended(other.url, run_id)
        took = time.monotonic() - killed
        events = _events(other.url, run_id)
    finally:
        restart.join()
    if reader is not None:
        reader.join(5)
    assert done["status"] == "completed", done
    assert _output_text(done) == ANSWER  # whole: the lost step's text is not in it twice
    assert counter.read_text() == "1"  # the recorded tool result was not made again
    # The events: acp-sdk reads every one; the lost step's text discarded once, then the
    # rest of the answer, and the end holding the whole output.
    assert all(EVENTS.validate_python(e) for e in events)
    discards = [i for i, e in enumerate(events) if e["type"] == "generic"]
    assert len(discards) == 1, [e["type"] for e in events]
    discarded = GenericEvent.model_validate(events[discards[0]]).generic.model_dump()
    assert discarded["type"] == "discarded" and discarded["text"].startswith("\n\nw0 w1 ")
    before, after = events[: discards[0]], events[discards[0] :]
    assert "".join(_texts(before)) == "Counting." + discarded["text"]
    assert "".join(_texts(after)) == ANSWER.removeprefix("Counting.")
    assert [e["type"] for e in events[:2]] == ["run.created", "run.in-progress"]
    assert events[-1]["type"] == "run.completed"
    assert _output_text(events[-1]["run"]) == ANSWER
    # Every replica reads it so, the restarted one included.
    again = httpx.get(f"{owner.url}/acp/runs/{run_id}").json()
    assert again["status"] == "completed" and _output_text(again) == ANSWER
    assert json.dumps(_events(owner.url, run_id)) == json.dumps(events)
    assert took < LEASE + LEASE / 3 + 3 + 3, took  # the lease, a claim, the 12 words' 3 s
    print(f"ACP {mode} run: kill -> completed on the other replica in {took:.2f} s")


def test_a_replica_stopped_by_sigterm_hands_its_async_run_over(
    pair: tuple[list[Replica], Path],
) -> None:
    (owner, other), counter = pair
    counter.unlink(missing_ok=True)
    run_id, _ = _start(owner.url, "async")
    _until(lambda: "w1 " in _texts(_events(other.url, run_id)))
    assert owner.process is not None
    owner.process.send_signal(signal.SIGTERM)  # a rolling deploy: the run is released
    stopped = time.monotonic()
    try:
        assert owner.process.wait(timeout=30) == 0
    finally:
        owner.process = None
        restart = _restart(owner)
    try:
        done = _ended(other.url, run_id)
        took = time.monotonic() - stopped
    finally:
        restart.join()
    assert done["status"] == "completed", done
    assert _output_text(done) == ANSWER
    assert counter.read_text() == "1"
    events = _events(other.url, run_id)  # resumed there: its lost step discarded
    assert [e["generic"]["type"] for e in events if e["type"] == "generic"] == ["discarded"]
    assert took < LEASE + 3 + 3, took  # no lease to wait out: a claim, the rest of the answer
    print(f"ACP async run: SIGTERM -> completed on the other replica in {took:.2f} s")
