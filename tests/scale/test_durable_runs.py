"""Durable runs across real replicas: a background Response outlives its replica.

Two ``agenthost serve`` processes share a real Redis (sessions and the run
log) and PostgreSQL. A background response whose agent ran a tool with a side
effect (a counter in a file) and is streaming its answer loses its replica to
``kill -9``; the client reconnects to the other replica from the last
sequence number it saw (the openai SDK's ``retrieve(stream=True,
starting_after=N)``). The run is claimed there once its lease expires and
resumed from its last finished step: the tool is not run again, every later
event arrives once and in order, and the answer is whole.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import openai
import pytest

from tests.scale.durable_agents import ANSWER
from tests.scale.test_replicas import Replica, replicas
from tests.stores import RedisServer, postgres_url, redis  # noqa: F401 (fixtures)

CONFIG = (
    "agents:\n  - {name: counting, import: 'tests.scale.durable_agents:counting'}\n"
    "  - {name: fragile, import: 'tests.scale.durable_agents:fragile', durable: false}\n"
)
LEASE = 2.0


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory,
    redis: RedisServer,  # noqa: F811
    postgres_url: str,  # noqa: F811
) -> Iterator[tuple[list[Replica], Path]]:
    folder = tmp_path_factory.mktemp("durable")
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


@contextmanager
def _clients(*replicas: Replica) -> Iterator[list[openai.OpenAI]]:
    clients = [
        openai.OpenAI(base_url=f"{r.url}/v1", api_key="unused", max_retries=0) for r in replicas
    ]
    try:
        yield clients
    finally:
        for client in clients:
            client.close()


def test_a_background_response_resumes_on_the_other_replica_without_running_its_tool_again(
    pair: tuple[list[Replica], Path],
) -> None:
    (owner, other), counter = pair
    counter.unlink(missing_ok=True)
    with _clients(owner, other) as (first, second):
        _resumes_elsewhere(owner, other, first, second, counter)


def _resumes_elsewhere(
    owner: Replica, other: Replica, first: openai.OpenAI, second: openai.OpenAI, counter: Path
) -> None:
    created = first.responses.create(model="counting", input="go", background=True)
    seen = []
    with first.responses.retrieve(created.id, stream=True) as stream:
        for event in stream:
            seen.append(event)
            if event.type == "response.output_text.delta" and event.delta == "w2 ":
                break
    assert counter.read_text() == "1"  # the tool ran, and the answer is under way
    owner.kill()
    killed = time.monotonic()
    try:
        last = seen[-1].sequence_number
        rest = []
        resumed_after: float | None = None
        with second.responses.retrieve(created.id, stream=True, starting_after=last) as stream:
            for event in stream:
                if resumed_after is None:
                    resumed_after = time.monotonic() - killed
                rest.append(event)
    finally:
        owner.start()
    numbers = [e.sequence_number for e in seen + rest]
    assert numbers == list(range(len(numbers)))  # no gap, no repeat
    done = rest[-1]
    assert done.type == "response.completed"
    assert done.response.output_text == ANSWER
    # The lost step is shown: the message item it was writing ends incomplete.
    incomplete = [
        e for e in rest if e.type == "response.output_item.done" and e.item.status == "incomplete"
    ]
    assert len(incomplete) == 1
    assert counter.read_text() == "1"  # the recorded tool result was not made again
    stored = second.responses.retrieve(created.id)
    assert stored.status == "completed" and stored.output_text == ANSWER
    assert first.responses.retrieve(created.id).output_text == ANSWER  # restarted: reads it too
    assert resumed_after is not None and resumed_after < LEASE + LEASE / 3 + 3
    print(f"resume latency (kill -> next event on the client): {resumed_after:.2f} s")


def _until_w2(client: openai.OpenAI, model: str) -> tuple[str, int]:
    """Start a background response; its id and the last sequence number seen, once the
    tool ran and the answer is under way."""
    created = client.responses.create(model=model, input="go", background=True)
    with client.responses.retrieve(created.id, stream=True) as stream:
        for event in stream:
            if event.type == "response.output_text.delta" and event.delta == "w2 ":
                return created.id, event.sequence_number
    raise AssertionError("the answer never got under way")


def test_a_replica_stopped_by_sigterm_hands_its_run_over(
    pair: tuple[list[Replica], Path],
) -> None:
    (owner, other), counter = pair
    counter.unlink(missing_ok=True)
    with _clients(owner, other) as (first, second):
        id, last = _until_w2(first, "counting")
        stopped = time.monotonic()
        owner.terminate()  # a rolling deploy: no lease to wait out, the run is released
        try:
            with second.responses.retrieve(id, stream=True, starting_after=last) as stream:
                rest = list(stream)
            took = time.monotonic() - stopped
        finally:
            owner.start()
    assert [e.sequence_number for e in rest] == list(range(last + 1, last + 1 + len(rest)))
    assert rest[-1].type == "response.completed"
    assert rest[-1].response.output_text == ANSWER
    assert counter.read_text() == "1"
    assert took < 15, took


def test_an_agent_that_is_not_durable_fails_its_orphaned_run_with_a_retryable_error(
    pair: tuple[list[Replica], Path],
) -> None:
    (owner, other), _counter = pair
    with _clients(owner, other) as (first, second):
        id, last = _until_w2(first, "fragile")
        owner.kill()
        killed = time.monotonic()
        try:
            # The stream's error event, which the openai SDK raises as it reads it.
            with (
                second.responses.retrieve(id, stream=True, starting_after=last) as stream,
                pytest.raises(openai.APIError, match="start the run again"),
            ):
                list(stream)
            took = time.monotonic() - killed
            stored = second.responses.retrieve(id)
        finally:
            owner.start()
    assert stored.status == "failed"
    assert stored.error is not None and "start the run again" in stored.error.message
    assert took < LEASE + LEASE / 3 + 3, took
