"""The run log's pieces: events round-trip, steps rebuilt from a log, the bound in
process, and the Redis log (real redis-server): one claimer, no event twice, followers
on the owner reading only what Redis has."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from agenthost.adapters.durable import (
    Discarded,
    DurableRuns,
    LocalRunLog,
    LoggedError,
    RunRecord,
)
from agenthost.adapters.durable.events import CANCELLED, decode, encode, failed
from agenthost.adapters.durable.steps import Progress
from agenthost.agents import (
    Message,
    ReasoningDelta,
    RunCancelled,
    RunFinished,
    RunResult,
    StateSnapshot,
    SubAgentUpdate,
    TextDelta,
    ToolCallDelta,
    ToolCallFinished,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
    Usage,
)
from agenthost.agents.errors import ModelBusy
from agenthost.app.redis_memory import redis_client
from agenthost.app.redis_runs import RedisRunLog
from tests.stores import RedisServer, ReplyCutter, redis  # noqa: F401 (fixture)

pytestmark = pytest.mark.anyio

CALL = ToolCallPart(id="c1", name="add", arguments='{"a": 1}')
RESULT = ToolResultPart(call_id="c1", name="add", content="2")


def test_every_update_comes_back_from_its_event() -> None:
    result = RunResult("hi", [Message.user("x"), Message.assistant("hi")], Usage(1, 2, 1))
    for update in (
        TextDelta('a "quoted" é'),
        ReasoningDelta("Thinking about x."),
        ToolCallDelta(0, "c1", "add", '{"a"'),
        ToolCallStarted(CALL),
        ToolCallFinished(RESULT),
        SubAgentUpdate("helper", ToolCallStarted(CALL)),
        StateSnapshot({"count": 2, "notes": ["a", "é"], "plan": {"done": False, "at": None}}),
        SubAgentUpdate("graph", StateSnapshot({"step": 1})),
        Discarded("partial", ("c2",)),
        RunFinished(result),
        RunFinished(RunResult("hi", [Message.user("x")], reasoning="Thinking about x.")),
        RunFinished(RunResult("hi", [Message.user("x")], Usage(5, 9, 2, reasoning_tokens=4))),
    ):
        assert decode(encode(update)) == update


def test_a_result_logged_before_reasoning_tokens_reads_zero() -> None:
    old = encode(RunFinished(RunResult("hi", [Message.user("x")], Usage(1, 2, 1))))
    assert b'"usage":[1,2,1]' in old  # three numbers, as older replicas write
    decoded = decode(old)
    assert isinstance(decoded, RunFinished) and decoded.result.usage == Usage(1, 2, 1, 0)


def test_an_ended_run_raises_its_error_when_read() -> None:
    with pytest.raises(LoggedError) as caught:
        decode(failed(ModelBusy("slow down")))
    assert caught.value.retryable and caught.value.kind == "busy"
    with pytest.raises(RunCancelled):
        decode(CANCELLED)


async def test_an_event_of_a_newer_version_is_skipped_and_the_run_still_reads() -> None:
    # A rolling upgrade: a newer replica logs an update kind this version does not know.
    newer = b'{"t":"citation","url":"https://example.com"}'
    assert decode(newer) is None
    assert decode(b'{"t":"sub","agent":"helper","update":' + newer + b"}") is None
    result = RunResult("hi", [Message.user("x"), Message.assistant("hi")])
    log = LocalRunLog(max_bytes=1 << 16)
    log.add(RunRecord("r1", "p", "a", "me", {}))
    for event in (encode(TextDelta("hi")), newer, encode(RunFinished(result))):
        log.append("r1", event)
    runs = DurableRuns(log)
    assert [u async for u in runs.updates("r1")] == [TextDelta("hi"), RunFinished(result)]
    assert [f.update for f in [f async for f in runs.follow("r1")]] == [
        TextDelta("hi"),
        RunFinished(result),
    ]


def test_finished_steps_are_rebuilt_and_the_unfinished_one_is_lost() -> None:
    second = ToolCallPart(id="c2", name="add", arguments="{}")
    progress = Progress.of(
        [
            TextDelta("Let me add."),
            ToolCallStarted(CALL),
            ToolCallFinished(RESULT),
            TextDelta("\n\n"),
            TextDelta("Once more."),
            ToolCallStarted(second),
        ]
    )
    assert [m.role for m in progress.messages] == ["assistant", "tool"]
    assert progress.messages[0].text == "Let me add." and progress.messages[0].tool_calls == [CALL]
    assert progress.messages[1].parts == [RESULT]
    assert progress.texts == ["Let me add."]
    assert progress.lost() == Discarded("\n\nOnce more.", ("c2",))
    # Discarded: the next try starts clean.
    progress.add(Discarded("\n\nOnce more.", ("c2",)))
    assert progress.lost() is None


def test_the_log_in_process_drops_settled_runs_only() -> None:
    log = LocalRunLog(max_bytes=4096)
    running = RunRecord("r0", "p", "a", "me", {})
    log.add(running)
    for i in range(1, 20):
        log.add(RunRecord(f"r{i}", "p", "a", "me", {}, status="completed"))
        log.append(f"r{i}", b'{"t":"text","x":"' + b"x" * 200 + b'"}')
    assert "r0" in log and "r19" in log
    assert "r1" not in log and log.dropped > 0
    assert log.bytes <= 4096


async def _logs(url: str, count: int) -> list[RedisRunLog]:
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    logs = []
    for _ in range(count):
        log = RedisRunLog(redis_client(url, timeout=2.0), retention=60, prefix=prefix)
        await log.start()
        logs.append(log)
    return logs


async def _close(logs: list[RedisRunLog]) -> None:
    for log in logs:
        await log.aclose()
        await log.client.aclose()


async def test_an_expired_lease_has_exactly_one_claimer(redis: RedisServer) -> None:  # noqa: F811
    logs = await _logs(redis.url, 4)
    try:
        record = RunRecord(uuid.uuid4().hex, "p", "a", "me", {"x": 1})
        await logs[0].create(record, "owner", 30)
        assert await logs[1].orphans() == []
        logs[0].append(record.id, encode(TextDelta("one")))
        await logs[0].flush(record.id)
        # The owner "died": its last renewal was short and ran out. (A lease of
        # 0.2 s from the start could run out before the check above on a busy
        # machine, which made this test flaky.)
        assert await logs[0].renew(record.id, "owner", 0.05)
        await asyncio.sleep(0.2)
        assert record.id in await logs[1].orphans()
        claims = await asyncio.gather(
            *(log.claim(record.id, f"replica{i}", 5) for i, log in enumerate(logs[1:]))
        )
        assert sorted(claims) == [False, False, True]
        winner = logs[1 + claims.index(True)]
        # The claimer adopted what was recorded and goes on numbering after it.
        assert await winner.events(record.id) == [(0, encode(TextDelta("one")))]
        assert winner.append(record.id, encode(TextDelta("two"))) == 1
        assert not await logs[0].renew(record.id, "owner", 5)  # the old owner lost it
    finally:
        await _close(logs)


async def test_a_claim_whose_answer_is_lost_is_retried_and_still_won(
    redis: RedisServer,  # noqa: F811
) -> None:
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    async with ReplyCutter(redis.port) as proxy:
        owner, claimer = (
            RedisRunLog(redis_client(url, timeout=2.0), retention=60, prefix=prefix)
            for url in (redis.url, f"redis://127.0.0.1:{proxy.port}/0")
        )
        try:
            records = [RunRecord(uuid.uuid4().hex, "p", "a", "me", {}) for _ in range(2)]
            for record in records:
                await owner.create(record, "owner", 0.2)
            await asyncio.sleep(0.3)  # the owner "died": its leases expired
            assert await claimer.claim(records[0].id, "claimer", 5)  # the script is loaded
            proxy.marker = records[1].id.encode()
            # Applied, its answer lost, sent again: the retry finds the lease its own.
            assert await claimer.claim(records[1].id, "claimer", 5)
            assert proxy.cuts == 1
            assert await owner.client.get(owner._key(records[1].id, "l")) == b"claimer"
            assert not await owner.claim(records[1].id, "other", 5)
        finally:
            await _close([owner, claimer])


async def test_an_event_written_again_is_kept_once(redis: RedisServer) -> None:  # noqa: F811
    (log,) = await _logs(redis.url, 1)
    try:
        record = RunRecord(uuid.uuid4().hex, "p", "a", "me", {})
        await log.create(record, "owner", 5)
        log.append(record.id, b'{"t":"text","x":"a"}')
        await log.flush(record.id)
        # A retry of a write whose answer was lost: refused as "equal or smaller", kept once.
        await log._send({record.id: [(0, b'{"t":"text","x":"a"}')]})
        stream = await log.client.xrange(log._key(record.id, "e"))
        assert len(stream) == 1
    finally:
        await _close([log])


async def test_a_follower_on_the_owner_sees_only_what_redis_has(
    redis: RedisServer,  # noqa: F811
) -> None:
    (log,) = await _logs(redis.url, 1)
    try:
        record = RunRecord(uuid.uuid4().hex, "p", "a", "me", {})
        await log.create(record, "owner", 5)
        log.append(record.id, b'{"t":"text","x":"a"}')
        assert log._written.get(record.id, -1) == -1
        batch = await log.wait(record.id, -1, 2.0)  # waits for the writer
        assert [seq for seq, _ in batch] == [0]
        assert log._written[record.id] == 0
        listed = await log.recent("me", "a")
        assert [r.id for r in listed] == [record.id]
    finally:
        await _close([log])


async def test_a_replica_that_lost_its_lease_stops_without_touching_the_run(
    redis: RedisServer,  # noqa: F811
) -> None:
    settled: list[object] = []

    class Slow:
        async def updates(self, record: RunRecord, done: list[Message]) -> Any:
            async def run() -> Any:
                yield TextDelta("a")
                await asyncio.sleep(30)

            return run()

        async def settled(self, record: RunRecord, result: object, error: object) -> None:
            settled.append(error)

    paused, other = await _logs(redis.url, 2)
    try:
        runs = DurableRuns(paused, lease_seconds=0.6, replica="paused")
        runs.handle("p", Slow())
        record = RunRecord(uuid.uuid4().hex, "p", "a", "me", {})
        await runs.start(record)
        task = runs.tasks[record.id]
        await asyncio.sleep(0.1)
        # The replica stalls past its lease (a long pause): another one claims the run.
        await paused.client.delete(paused._key(record.id, "l"))
        assert await other.claim(record.id, "other", 30)
        await asyncio.wait([task], timeout=2)  # stopped at its next renewal
        assert task.done()
        stored = await other.get(record.id)
    finally:
        await _close([paused, other])
    assert settled == []  # nothing written over the run the other replica goes on with
    assert stored is not None and stored.status == "in_progress"


async def test_a_late_renewal_keeps_a_lease_nobody_took(redis: RedisServer) -> None:  # noqa: F811
    (log,) = await _logs(redis.url, 1)
    try:
        record = RunRecord(uuid.uuid4().hex, "p", "a", "me", {})
        await log.create(record, "owner", 0.2)
        await asyncio.sleep(0.3)  # starved past its lease, but nobody claimed it
        assert await log.renew(record.id, "owner", 5)
        assert await log.orphans() == []
    finally:
        await _close([log])
