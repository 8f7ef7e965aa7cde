"""A tool that needs approval over A2A: the task is input-required with the question, and a
reply in the same task runs the call (yes) or tells the model it was declined (no)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from a2a.types import TaskState

from tests.adapters.a2a.support import (
    artifact_text,
    collect,
    final_task,
    in_process,
    sdk_client,
    user_message,
)
from tests.adapters.approvals import QUESTION, RAN, WAS_DECLINED, Deleter

pytestmark = pytest.mark.anyio

DELETER = Deleter()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process({"deleter": DELETER.agent}) as client:
        yield client


@pytest.mark.parametrize(("reply", "answer", "runs"), [("yes", RAN, 1), ("no", WAS_DECLINED, 0)])
async def test_an_approval_is_input_required_and_the_reply_decides(
    http: httpx.AsyncClient, reply: str, answer: str, runs: int
) -> None:
    DELETER.deleted.clear()
    url = "http://localhost/a2a/deleter"
    async with await sdk_client(url, "JSONRPC", http=http, streaming=False) as client:
        asked = final_task(await collect(client, user_message("tidy up")))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert asked.status.message.parts[0].text == QUESTION
        assert DELETER.deleted == []
        message = user_message(reply, task_id=asked.id, context_id=asked.context_id)
        done = final_task(await collect(client, message))
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(done) == answer
    assert DELETER.deleted == ["/tmp/notes.txt"] * runs
