"""IBM ACP ``async`` and ``stream`` runs as durable runs, in one process.

Across replicas (kill -9, resume elsewhere): tests/scale/test_durable_acp.py.
"""

import asyncio
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from acp_sdk.models import Run, RunInProgressEvent, RunStatus
from asgi_lifespan import LifespanManager

from agenthost.adapters.acp.detached import PROTOCOL, DetachedRuns
from agenthost.adapters.acp.execution import RunWriter
from agenthost.adapters.acp.runs import RunRecord, RunStore
from agenthost.adapters.acp.shared import SharedRuns
from agenthost.adapters.base import AdapterContext
from agenthost.adapters.cancels import CancelChannel
from agenthost.adapters.durable import Discarded, DurableRuns, LocalRunLog
from agenthost.adapters.durable import RunRecord as DurableRecord
from agenthost.adapters.durable.events import decode, encode
from agenthost.adapters.durable.runner import ORPHANED
from agenthost.adapters.durable.steps import Progress
from agenthost.adapters.leases import Leases
from agenthost.agents import (
    ChatAgent,
    Message,
    RunFinished,
    SessionKey,
    TextDelta,
    ToolCallFinished,
    ToolCallPart,
    ToolCallStarted,
    ToolResultPart,
)
from agenthost.agents.errors import RunInterrupted
from agenthost.agents.models import EchoModel
from agenthost.app.memory import LRUMemoryManager
from agenthost.app.redis_client import redis_client
from agenthost.app.redis_memory import RedisMemoryManager
from agenthost.app.server import create_app
from tests.adapters.acp.clients import acp_settings
from tests.scale.durable_agents import WORDS, counting
from tests.stores import RedisServer, redis  # noqa: F401 (fixture)

pytestmark = pytest.mark.anyio

CALL = ToolCallPart(id="c1", name="count", arguments="{}")
RESULT = ToolResultPart(call_id="c1", name="count", content="1")
AGAIN = ToolCallPart(id="c2", name="count", arguments="{}")


def _writer() -> RunWriter:
    run = Run(agent_name="counting")
    record = RunRecord(run, "anonymous", SessionKey("counting", "s", "anonymous"), durable=True)
    return RunWriter(record, "counting")


async def test_a_discarded_step_leaves_the_output_as_the_last_finished_step_had_it() -> None:
    writer = _writer()
    steps = [TextDelta("Counting."), ToolCallStarted(CALL), ToolCallFinished(RESULT)]
    lost = [TextDelta("\n\nw0 "), TextDelta("w1 "), ToolCallStarted(AGAIN)]
    for update in [*steps, *lost, Discarded("\n\nw0 w1 ", ("c2",)), TextDelta("\n\nw0 w1 w2")]:
        await writer.feed(update)
    assert writer.message is not None
    parts = writer.message.parts
    assert [p.content for p in parts] == ["Counting.", None, None, "\n\nw0 w1 w2"]
    assert [p.metadata.tool_name for p in parts[1:3] if p.metadata is not None] == ["count"] * 2
    events = [orjson.loads(e) for e in writer.record.events.since(0)]
    generic = [e["generic"] for e in events if e["type"] == "generic"]
    assert generic == [{"type": "discarded", "text": "\n\nw0 w1 ", "tool_calls": ["c2"]}]


async def test_a_step_lost_before_any_finished_one_empties_the_output() -> None:
    writer = _writer()
    await writer.feed(TextDelta("Count"))
    await writer.feed(Discarded("Count"))
    assert writer.message is not None and writer.message.parts == []
    await writer.feed(TextDelta("Counting."))
    assert [p.content for p in writer.message.parts] == ["Counting."]


@pytest.mark.parametrize("mode", ["async", "stream", "sync"])
async def test_async_and_stream_runs_are_recorded_in_the_run_log(mode: str) -> None:
    app = create_app(acp_settings(), {"echo": ChatAgent("echo", EchoModel())})
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            body = {
                "agent_name": "echo",
                "mode": mode,
                "session_id": "0b4e2c6a-8b7e-4a4f-9f0e-3a9d2b1c0d1e",
                "input": [{"parts": [{"content": "hello there"}]}],
            }
            answer = await http.post("/acp/runs", json=body)
            run_id = answer.headers["run-id"]
            for _ in range(100):
                run = (await http.get(f"/acp/runs/{run_id}")).json()
                if run["status"] == "completed":
                    break
                await asyncio.sleep(0.05)
            assert run["status"] == "completed", run
            record = await app.state.host.durable.log.get(run_id)
    if mode == "sync":  # the client waits on its request: not detached
        assert record is None
        return
    assert record is not None and record.protocol == "acp.runs" and record.agent == "echo"
    assert record.status == "completed" and record.principal == "anonymous"
    assert record.request["session"] == body["session_id"]
    assert record.request["input"][0]["parts"][0]["text"] == "hello there"


def _kind() -> tuple[DetachedRuns, DurableRuns]:
    """The ACP run kind over a run log in this process, as a replica taking a run over."""
    runs = DurableRuns(LocalRunLog())
    context = AdapterContext(
        agents={"counting": counting},
        memory=LRUMemoryManager("acp", max_sessions=10, ttl=60),
        durable=runs,
    )
    return DetachedRuns(context, RunStore(max_runs=10, ttl=60), None), runs


async def _orphan(runs: DurableRuns) -> DurableRecord:
    """A run another replica started and died in: its first step finished (the tool
    ran), the second under way; the resume recorded the lost step as discarded."""
    request = {
        "session": str(uuid.uuid4()),
        "input": [Message.user("go").model_dump(mode="json", exclude_none=True)],
        "created_at": "2026-12-02T12:00:00+00:00",
    }
    record = DurableRecord(str(uuid.uuid4()), PROTOCOL, "counting", "anonymous", request)
    await runs.log.create(record)
    call = ToolCallPart(id="call_count", name="count", arguments="{}")
    for update in [
        TextDelta("Counting."),
        ToolCallStarted(call),
        ToolCallFinished(ToolResultPart(call_id="call_count", name="count", content="1")),
        TextDelta("\n\nw0 "),
        Discarded("\n\nw0 "),
    ]:
        runs.log.append(record.id, encode(update))
    return record


async def test_a_run_taken_over_is_rebuilt_from_the_log_and_ends_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = tmp_path / "counter"
    monkeypatch.setenv("DURABLE_COUNTER", str(counter))
    kind, runs = _kind()
    record = await _orphan(runs)
    done = Progress.of(decode(raw) for _, raw in await runs.log.events(record.id)).messages
    updates = await kind.updates(record, done)
    result = None
    async for update in updates:
        if isinstance(update, RunFinished):
            result = update.result
    assert result is not None
    await kind.settled(record, result, None)
    acp = kind.store.get("anonymous", record.id)
    assert acp is not None and acp.run.status == RunStatus.COMPLETED
    texts = [p.content for p in acp.run.output[0].parts if p.metadata is None]
    assert "".join(str(t) for t in texts) == "Counting.\n\n" + "".join(WORDS)
    types = [orjson.loads(e)["type"] for e in acp.events.since(0)]
    assert types[:2] == ["run.created", "run.in-progress"]
    assert types.count("generic") == 1 and types[-1] == "run.completed"
    assert not counter.exists()  # its recorded result was not made again


async def test_a_run_that_is_not_durable_is_failed_where_it_is_taken_over() -> None:
    kind, runs = _kind()
    record = await _orphan(runs)
    await kind.settled(record, None, RunInterrupted(ORPHANED))
    acp = kind.store.get("anonymous", record.id)
    assert acp is not None and acp.run.status == RunStatus.FAILED
    assert acp.run.error is not None and acp.run.error.message == ORPHANED
    assert acp.run.error.code == "server_error"


class _LosesACancel(RedisMemoryManager):
    """A store whose write loses the cancel that lands on it, as Python 3.11's
    ``asyncio.wait_for`` does when its inner write completes at that moment (redis-py
    sends every command through it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writing = asyncio.Event()

    async def append(
        self, key: SessionKey, messages: Sequence[Message], *, meta: dict[str, Any] | None = None
    ) -> None:
        await super().append(key, messages, meta=meta)
        self.writing.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return  # lost


async def test_a_run_leaves_its_shared_progress_when_a_store_write_loses_the_cancel(
    redis: RedisServer,  # noqa: F811
) -> None:
    # Seen under load: a run taken over from a killed replica finished its agent run,
    # but waited for ever for this progress loop, so it stayed in progress.
    client = redis_client(redis.url, timeout=2.0)
    memory = _LosesACancel(client, "acp-runs", ttl=60)
    shared = SharedRuns(memory, CancelChannel(memory, "acp"), Leases(memory, "acp", 2.0))
    run = Run(agent_name="echo", session_id=uuid.uuid4())
    record = RunRecord(run, "anonymous", SessionKey("echo", str(run.session_id), "anonymous"))
    try:
        async with asyncio.timeout(20) as bound:  # a bound on the hang, not a measure
            async with shared.working(record):
                await asyncio.sleep(0)  # the progress loop has started
                record.emit(RunInProgressEvent(run=run))  # progress to share
                await memory.writing.wait()
        assert not bound.expired()  # (its cancel may be swallowed where the loop was awaited)
        assert (await shared.load("anonymous", record.run_id)) is not None
    finally:
        await client.aclose()
