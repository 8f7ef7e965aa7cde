"""A tool that needs approval over IBM ACP: the run awaits with the question, and the
resume decides: yes runs the call once, no never runs it and the model is told."""

import pytest
from acp_sdk.models import Message, MessageAwaitResume, MessagePart, RunStatus

from tests.adapters.acp.clients import acp_client
from tests.adapters.approvals import QUESTION, RAN, WAS_DECLINED, Deleter

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::async_lru.AlruCacheLoopResetWarning"),
]


@pytest.mark.parametrize(("reply", "answer", "runs"), [("yes", RAN, 1), ("no", WAS_DECLINED, 0)])
async def test_an_approval_awaits_and_the_resume_decides(
    reply: str, answer: str, runs: int
) -> None:
    deleter = Deleter()
    async with acp_client({"deleter": deleter.agent}) as client:
        run = await client.run_sync("tidy up", agent="deleter")
        assert run.status == RunStatus.AWAITING and run.await_request is not None
        assert str(run.await_request.message) == QUESTION
        assert deleter.deleted == []
        resume = MessageAwaitResume(message=Message(parts=[MessagePart(content=reply)]))
        resumed = await client.run_resume_sync(resume, run_id=run.run_id)
    assert resumed.status == RunStatus.COMPLETED
    assert str(resumed.output[-1]) == answer
    assert deleter.deleted == ["/tmp/notes.txt"] * runs
