"""A settled run: its event log packed, its task and ``Run`` let go, its answers unchanged."""

import asyncio
import zlib

import httpx
import orjson
import pytest
from acp_sdk.models import (
    Message,
    MessageCompletedEvent,
    MessagePart,
    MessagePartEvent,
    Run,
    RunCompletedEvent,
    RunCreatedEvent,
    RunInProgressEvent,
    RunStatus,
)
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from agenthost.adapters.acp import event_log
from agenthost.adapters.acp.adapter import ACPAdapter
from agenthost.adapters.acp.event_log import EventLog
from agenthost.adapters.acp.runs import RunRecord
from agenthost.adapters.acp.shared import NAMESPACE, SharedRuns
from agenthost.agents import ChatAgent, SessionKey
from agenthost.agents.models import EchoModel
from agenthost.app.redis_memory import RedisMemoryManager, redis_client
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)


def _events(count: int) -> list[bytes]:
    parts = [
        MessagePartEvent(part=MessagePart(content=f"word {n} «é»\n", content_type="text/plain"))
        for n in range(count)
    ]
    return [event.model_dump_json().encode() for event in parts]


def test_a_packed_log_reads_back_every_event_byte_for_byte() -> None:
    events = _events(40)
    log = EventLog(events)
    size = log.json_bytes
    log.pack()
    assert log.packed and len(log) == 40 and log.json_bytes == size == sum(map(len, events))
    assert log.json_array() == b"[" + b",".join(events) + b"]"
    assert orjson.loads(log.json_array()) == [orjson.loads(e) for e in events]
    assert log.since(37) == events[37:] and log.last() == events[-1]
    assert log.packed  # reading does not unpack
    more = _events(1)[0]
    log.append(more)  # a resumed run goes on where it was
    assert not log.packed and log.since(0) == [*events, more] and len(log) == 41


def test_text_deltas_pack_as_their_joined_text_and_read_back_exactly() -> None:
    # Deltas with quotes, backslashes, escapes and non-ASCII; a tool part and other
    # events between runs of them; an empty delta; deltas at the end (a working run).
    texts = ['say "hi" ', "a\\b ", "", "«é» \n\u0001", "tab\t"]
    deltas = [
        MessagePartEvent(part=MessagePart(content=t, content_type="text/plain")) for t in texts
    ]
    tool = MessagePartEvent(part=MessagePart(content=None, name="tool"))
    created = RunCreatedEvent(run=Run(agent_name="echo"))
    events = [
        e.model_dump_json().encode()
        for e in [created, *deltas[:3], tool, *deltas[3:], created, *deltas]
    ]
    log = EventLog(events)
    log.pack()
    assert log.since(0) == events and log.last() == events[-1]
    assert log.json_array() == b"[" + b",".join(events) + b"]"
    assert EventLog.from_packed(log.packed_bytes).since(0) == events
    inflated = zlib.decompressobj(zdict=event_log._SKELETON).decompress(log.packed_bytes)
    assert inflated.count(b"\n") == 5  # created, 3 deltas, tool, 2 deltas, created, 5 deltas


def test_a_log_packed_before_deltas_were_joined_still_reads() -> None:
    events = [*_events(3), RunCreatedEvent(run=Run(agent_name="e")).model_dump_json().encode()]
    deflate = zlib.compressobj(3, zdict=event_log._SKELETON)  # how logs were packed before
    old = deflate.compress(b"\n".join(events)) + deflate.flush()
    log = EventLog.from_packed(old)
    assert log.packed and len(log) == 4 and log.since(0) == events and log.last() == events[-1]
    assert log.json_bytes == sum(map(len, events))


def test_an_empty_log_stays_a_list() -> None:
    log = EventLog()
    log.pack()
    assert not log.packed and log.json_array() == b"[]" and log.since(0) == []


@pytest.mark.anyio
async def test_a_settled_record_drops_its_run_and_task_and_rebuilds_the_same_run() -> None:
    run = Run(agent_name="echo", session_id="00000000-0000-0000-0000-000000000001")
    record = RunRecord(run, "anonymous", SessionKey("echo", str(run.session_id), "anonymous"))
    record.work(asyncio.create_task(asyncio.sleep(0)))
    record.emit(RunCreatedEvent(run=run))
    run.status = RunStatus.IN_PROGRESS
    record.emit(RunInProgressEvent(run=run))
    message = Message(
        role="agent/echo", parts=[MessagePart(content="hi", content_type="text/plain")]
    )
    run.output.append(message)
    record.emit(MessageCompletedEvent(message=message))
    assert not record.events.packed and record.busy
    await record.finished()
    await asyncio.sleep(0)  # the done callback
    assert record.task is None and not record.busy
    record.settle(RunStatus.COMPLETED)
    expected = run.model_dump_json().encode()
    record.emit(RunCompletedEvent(run=run))
    assert record.events.packed and record.settled
    assert record.run_json() == expected  # served from the log, nothing rebuilt
    assert record.run.model_dump_json().encode() == expected  # rebuilt on demand
    assert record.run.status == RunStatus.COMPLETED and record.run_id == str(run.run_id)


@pytest.mark.anyio
async def test_a_settled_runs_answers_come_from_its_packed_log() -> None:
    app = create_app(Settings(), {"echo": ChatAgent("echo", EchoModel())})
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            body = {
                "agent_name": "echo",
                "mode": "sync",
                "input": [{"role": "user", "parts": [{"content": "one two three"}]}],
            }
            answer = await client.post("/acp/runs", json=body)
            assert answer.status_code == 200
            run_id = answer.json()["run_id"]
            read = await client.get(f"/acp/runs/{run_id}")
            assert read.content == answer.content and read.headers["Run-ID"] == run_id
            events = (await client.get(f"/acp/runs/{run_id}/events")).json()["events"]
            assert [e["type"] for e in events][:3] == [
                "run.created",
                "run.in-progress",
                "message.created",
            ]
            assert events[-1] == {"type": "run.completed", "run": answer.json()}
            assert "".join(e["part"]["content"] for e in events if e["type"] == "message.part") == (
                "one two three"
            )


@pytest.mark.anyio
async def test_run_snapshots_in_redis_are_packed_and_old_ones_still_read(
    redis: RedisServer,  # noqa: F811
) -> None:
    memory = RedisMemoryManager(redis_client(redis.url, timeout=2), NAMESPACE, ttl=60)
    shared = SharedRuns(memory, cancels=None, leases=None)  # type: ignore[arg-type]
    run = Run(agent_name="echo", session_id="00000000-0000-0000-0000-000000000002")
    record = RunRecord(run, "p", SessionKey("echo", str(run.session_id), "p"))
    record.emit(RunCreatedEvent(run=run))
    for word in ("one ", "two "):
        record.emit(MessagePartEvent(part=MessagePart(content=word, content_type="text/plain")))
    record.settle(RunStatus.COMPLETED)
    record.emit(RunCompletedEvent(run=run))
    await shared.save(record)
    stored = await memory.get(SessionKey("run", record.run_id, "p"))
    assert stored is not None and "events" not in stored.meta and stored.meta["packed_events"]
    assert stored.meta["run"] is None  # settled: the run is in its last event only
    assert record.saved == len(record.events) == 4
    loaded = await shared.load("p", record.run_id)
    assert loaded is not None and loaded.events.packed and loaded.in_log
    assert loaded.run_id == record.run_id and loaded.saved == 4 and loaded.kept_elsewhere
    assert loaded.events.json_array() == record.events.json_array() and len(loaded.events) == 4
    assert loaded.run_json() == record.run_json() and loaded.run.status == RunStatus.COMPLETED
    key = SessionKey("run", record.run_id, "p")
    run_dict = orjson.loads(run.model_dump_json())
    # Written before settled runs were kept once: the run beside its packed log.
    await memory.delete(key)
    await memory.append(key, (), meta={**stored.meta, "run": run_dict})
    before = await shared.load("p", record.run_id)
    assert before is not None and before.run_json() == record.run_json()
    assert before.events.json_array() == record.events.json_array()
    # Written before logs were packed: the run and its events as one JSON array.
    old = {**stored.meta, "run": run_dict, "events": record.events.json_array().decode()}
    del old["packed_events"]
    await memory.delete(key)
    await memory.append(key, (), meta=old)
    again = await shared.load("p", record.run_id)
    assert again is not None and again.events.json_array() == record.events.json_array()
    assert again.run.model_dump_json() == run.model_dump_json()
    await memory.aclose()


@pytest.mark.anyio
async def test_with_a_shared_store_a_settled_run_is_read_there_not_kept_in_process(
    redis: RedisServer,  # noqa: F811
) -> None:
    settings = Settings(session_store=redis.url)
    app = create_app(settings, {"echo": ChatAgent("echo", EchoModel())})
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            answers = []
            for text in ("one two", "three four", "five six"):
                body = {
                    "agent_name": "echo",
                    "mode": "sync",
                    "input": [{"role": "user", "parts": [{"content": text}]}],
                }
                answer = await client.post("/acp/runs", json=body)
                assert answer.status_code == 200
                answers.append(answer)
            store = _acp(app).runs
            # Each run's settled snapshot is in Redis: a later run's start let it go.
            assert len(store) == 1 and store.evictions == 0
            for answer in answers:
                run_id = answer.json()["run_id"]
                assert (store.get("anonymous", run_id) is None) == (answer is not answers[-1])
                read = await client.get(f"/acp/runs/{run_id}")
                assert read.status_code == 200 and read.content == answer.content
                events = (await client.get(f"/acp/runs/{run_id}/events")).json()["events"]
                assert events[-1] == {"type": "run.completed", "run": answer.json()}


def _acp(app: FastAPI) -> ACPAdapter:
    return next(a for a in app.state.adapters.values() if isinstance(a, ACPAdapter))
