"""A resumable chat across two ``agenthost serve`` replicas on one real Redis: a stream
that drops from one replica is picked up on the other, replayed from its start and
followed to its end (the run log and the chat's current run are in Redis)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.adapters.ai_sdk.test_chat import kinds, text, user
from tests.adapters.ai_sdk.test_resume import chunks_of, same, until
from tests.scale.durable_agents import ANSWER
from tests.scale.test_replicas import Replica, replicas
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

CONFIG = "agents:\n  - {name: counting, import: 'tests.scale.durable_agents:counting'}\n"


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory,
    redis: RedisServer,  # noqa: F811
) -> Iterator[list[Replica]]:
    folder = tmp_path_factory.mktemp("ai-sdk-resume")
    with replicas(
        folder,
        2,
        config=CONFIG,
        AGENTHOST_ADAPTERS="ai_sdk",
        AGENTHOST_SESSION_STORE=redis.url,
        AGENTHOST_AI_SDK_RESUME="true",
        DURABLE_COUNTER=str(folder / "counter"),
    ) as started:
        yield started


def test_a_stream_dropped_on_one_replica_resumes_on_the_other(pair: list[Replica]) -> None:
    first, second = pair
    chat = f"chat-{uuid.uuid4().hex}"
    posted = {"id": chat, "messages": [user("count")], "trigger": "submit-message"}
    with httpx.Client(timeout=30) as c:
        with c.stream("POST", f"{first.url}/ai-sdk/counting", json=posted) as dropped:
            assert dropped.status_code == 200
            before = until(chunks_of(dropped.iter_lines()), "tool-output-available")
        path = f"{second.url}/ai-sdk/counting/{chat}/stream"
        with c.stream("GET", path) as again:
            assert again.status_code == 200
            assert again.headers["x-vercel-ai-ui-message-stream"] == "v1"
            whole = list(chunks_of(again.iter_lines()))
        assert same(whole[: len(before)]) == same(before)
        assert kinds(whole)[-2:] == ["finish-step", "finish"]
        assert text(whole) == ANSWER
        # Over: 204 on either replica (its end is settled just after its last chunk).
        deadline = time.monotonic() + 10
        while c.get(path).status_code != 204:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert c.get(f"{first.url}/ai-sdk/counting/{chat}/stream").status_code == 204
