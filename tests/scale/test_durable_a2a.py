"""Durable runs across real replicas: an A2A task outlives its replica.

Two ``agenthost serve`` processes share a real Redis (sessions and the run
log) and PostgreSQL (A2A tasks). A task streamed with ``SendStreamingMessage``
whose agent ran a tool with a side effect (a counter in a file) and is
streaming its answer loses its replica to ``kill -9``; the client subscribes
to the task on the other replica (``SubscribeToTask``). The run is claimed
there once its lease expires and resumed from its last finished step: the
tool is not run again, the answer's artifact is first replaced (``append:
false``) by the text of the finished steps, the rest of the answer follows,
and the task ends ``completed`` with the whole answer, on both replicas.
A replica stopped by SIGTERM hands its task over at once; an agent with
``durable: false`` has its orphaned task failed, with a retryable message.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import httpx
import orjson
import pytest

from tests.scale.durable_agents import ANSWER
from tests.scale.test_replicas import Replica, replicas
from tests.stores import RedisServer, postgres_url, redis  # noqa: F401 (fixtures)

CONFIG = (
    "agents:\n  - {name: counting, import: 'tests.scale.durable_agents:counting'}\n"
    "  - {name: fragile, import: 'tests.scale.durable_agents:fragile', durable: false}\n"
    "  - {name: recall, import: 'tests.scale.replica_agents:recall'}\n"
)
LEASE = 2.0
T = TypeVar("T")
HEADERS = {"A2A-Version": "1.0", "accept": "text/event-stream"}


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory,
    redis: RedisServer,  # noqa: F811
    postgres_url: str,  # noqa: F811
) -> Iterator[tuple[list[Replica], Path]]:
    folder = tmp_path_factory.mktemp("durable-a2a")
    counter = folder / "counter"
    with replicas(
        folder,
        2,
        config=CONFIG,
        AGENTHOST_ADAPTERS="a2a",
        AGENTHOST_SESSION_STORE=redis.url,
        AGENTHOST_A2A_TASK_STORE=postgres_url,
        AGENTHOST_RUN_LEASE_SECONDS=str(LEASE),
        DURABLE_COUNTER=str(counter),
    ) as started:
        yield started, counter


def _events(
    url: str, method: str, params: dict[str, Any], agent: str = "counting"
) -> Iterator[dict[str, Any]]:
    """A JSON-RPC stream's results (``StreamResponse`` JSON), as they come."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    with httpx.stream(
        "POST", f"{url}/a2a/{agent}", json=body, headers=HEADERS, timeout=30
    ) as answer:
        for line in answer.iter_lines():
            if line.startswith("data:"):
                event = orjson.loads(line.removeprefix("data:"))
                assert "result" in event, event
                yield event["result"]


def _get_task(url: str, id: str, agent: str = "counting") -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": id}}
    answer = httpx.post(f"{url}/a2a/{agent}", json=body, headers=HEADERS, timeout=30)
    task: dict[str, Any] = answer.json()["result"]
    return task


def _text(artifact: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in artifact["parts"])


def _until_w2(url: str, agent: str = "counting") -> str:
    """Stream a message; the task's id, once its tool ran and the answer is under way."""
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "go"}]}
    seen: list[dict[str, Any]] = []
    for event in _events(url, "SendStreamingMessage", {"message": message}, agent):
        seen.append(event)
        update = event.get("artifactUpdate")
        if update is not None and "w2 " in _text(update["artifact"]):
            return str(seen[0]["task"]["id"])
    raise AssertionError(f"the answer never got under way: {seen}")


def _rest(url: str, task_id: str, agent: str = "counting") -> list[dict[str, Any]]:
    """``SubscribeToTask`` on ``url``: its events, up to the task's end."""
    rest = []
    for event in _events(url, "SubscribeToTask", {"id": task_id}, agent):
        rest.append(event)
        status = event.get("statusUpdate", {}).get("status", {}).get("state")
        if status not in (None, "TASK_STATE_WORKING"):
            break
    return rest


def _both_up(replicas: list[Replica]) -> None:
    for replica in replicas:
        if replica.process is None:
            replica.start()


def test_a_task_resumes_on_the_other_replica_without_running_its_tool_again(
    pair: tuple[list[Replica], Path],
) -> None:
    """Killed with it: a task of an agent with ``durable: false``, which fails instead."""
    (owner, other), counter = pair
    _both_up([owner, other])
    counter.unlink(missing_ok=True)
    with ThreadPoolExecutor(2) as pool:  # both under way at once, neither over at the kill
        started = [pool.submit(_until_w2, owner.url, agent) for agent in ("fragile", "counting")]
        fragile, task_id = (future.result(timeout=30) for future in started)
    assert counter.read_text() == "2"  # the tools ran, and the answers are under way
    owner.kill()
    killed = time.monotonic()
    try:
        with ThreadPoolExecutor(1) as pool:
            failing = pool.submit(_timed, _rest, other.url, fragile, "fragile")
            rest = []
            resumed_after: float | None = None
            for event in _events(other.url, "SubscribeToTask", {"id": task_id}):
                rest.append(event)
                if "artifactUpdate" in event and resumed_after is None:
                    resumed_after = time.monotonic() - killed
                status = event.get("statusUpdate", {}).get("status", {}).get("state")
                if status not in (None, "TASK_STATE_WORKING"):
                    break
            failed, failed_after = failing.result(timeout=30)
        on_other = _get_task(other.url, task_id)
    finally:
        owner.start()
    # The subscription: the task as it stands, then the rest, ending completed.
    assert rest[0]["task"]["status"]["state"] == "TASK_STATE_WORKING", rest[0]
    assert rest[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", rest[-1]
    # The lost step is dropped: the artifact starts again from the finished step's text.
    updates = [e["artifactUpdate"] for e in rest if "artifactUpdate" in e]
    replaced = [u for u in updates if not u.get("append")]
    assert len(replaced) == 1 and _text(replaced[0]["artifact"]) == "Counting.", updates
    assert updates[0] is replaced[0]
    assert "".join(_text(u["artifact"]) for u in updates) == ANSWER
    assert updates[-1].get("lastChunk") is True
    assert counter.read_text() == "2"  # the recorded tool results were not made again
    for task in (on_other, _get_task(owner.url, task_id)):  # the owner restarted reads it too
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        assert [_text(a) for a in task["artifacts"]] == [ANSWER]
    assert resumed_after is not None and resumed_after < LEASE + LEASE / 3 + 3
    print(f"resume latency (kill -> next artifact chunk on the client): {resumed_after:.2f} s")
    # Not durable: failed within lease + claim interval, saying to start it again.
    end = failed[-1]["statusUpdate"]["status"]
    assert end["state"] == "TASK_STATE_FAILED", end
    assert "start the run again" in end["message"]["parts"][0]["text"], end
    assert end["message"]["metadata"]["retryable"] is True, end
    assert _get_task(owner.url, fragile, "fragile")["status"]["state"] == "TASK_STATE_FAILED"
    assert failed_after < LEASE + LEASE / 3 + 3, failed_after


def test_a_question_asked_on_one_replica_is_answered_on_the_other(
    pair: tuple[list[Replica], Path],
) -> None:
    """A durable run that ends waiting for its user: the answer, sent to the other
    replica and naming only its task, runs there as the task's next durable run."""
    (owner, other), _ = pair
    _both_up([owner, other])

    def send(url: str, message: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": {"message": message}}
        answer = httpx.post(f"{url}/a2a/recall", json=body, headers=HEADERS, timeout=30)
        task: dict[str, Any] = answer.json()["result"]["task"]
        return task

    asked = send(
        owner.url, {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "ask"}]}
    )
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", asked
    reply = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "taskId": asked["id"],
        "parts": [{"text": "Bob"}],
    }
    done = send(other.url, reply)
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert [_text(a) for a in done["artifacts"]] == ["Nice to meet you, Bob."]


def _timed(call: Callable[..., T], *args: Any) -> tuple[T, float]:
    started = time.monotonic()
    return call(*args), time.monotonic() - started


def test_a_replica_stopped_by_sigterm_hands_its_task_over(
    pair: tuple[list[Replica], Path],
) -> None:
    (other, owner), counter = pair
    _both_up([owner, other])
    counter.unlink(missing_ok=True)
    task_id = _until_w2(owner.url)
    stopped = time.monotonic()
    owner.terminate()  # a rolling deploy: no lease to wait out, the run is released
    rest = []  # followed over HTTP+JSON this time
    url = f"{other.url}/a2a/counting/tasks/{task_id}:subscribe"
    with httpx.stream("POST", url, headers=HEADERS, timeout=30) as answer:
        for line in answer.iter_lines():
            if line.startswith("data:"):
                rest.append(orjson.loads(line.removeprefix("data:")))
    took = time.monotonic() - stopped
    assert rest[0]["task"]["status"]["state"] == "TASK_STATE_WORKING", rest[0]
    assert rest[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED", rest[-1]
    task = _get_task(other.url, task_id)
    assert [_text(a) for a in task["artifacts"]] == [ANSWER], task
    assert counter.read_text() == "1"
    assert took < 15, took
