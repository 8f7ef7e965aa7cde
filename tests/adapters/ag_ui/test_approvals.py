"""A tool that needs approval over AG-UI: the run finishes with a ``tool_approval``
interrupt (the call's id, the one-field form); the resume runs the call once when it
approves, and never when it declines or cancels (the model is told)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.adapters.ag_ui.clients import ag_ui_client, run, run_input, text_of, user
from tests.adapters.approvals import QUESTION, RAN, WAS_DECLINED, Deleter

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("status", "payload", "answer", "runs"),
    [
        ("resolved", {"approve": True}, RAN, 1),
        ("resolved", "yes", RAN, 1),
        ("resolved", {"approve": False}, WAS_DECLINED, 0),
        ("cancelled", None, WAS_DECLINED, 0),
    ],
)
async def test_an_approval_is_an_interrupt_that_resume_decides(
    status: str, payload: Any, answer: str, runs: int
) -> None:
    deleter = Deleter()
    async with ag_ui_client({"deleter": deleter.agent}) as client:
        body = run_input([user("tidy up")])
        first = await run(client, "deleter", body)
        outcome = first[-1].outcome  # type: ignore[attr-defined]
        [interrupt] = outcome.interrupts
        assert interrupt.reason == "tool_approval" and interrupt.message == QUESTION
        assert interrupt.tool_call_id == interrupt.id
        assert list(interrupt.response_schema["properties"]) == ["approve"]
        assert deleter.deleted == []
        resume = [{"interruptId": interrupt.id, "status": status, "payload": payload}]
        second = await run(client, "deleter", run_input([], body["threadId"], resume=resume))
    assert deleter.deleted == ["/tmp/notes.txt"] * runs
    assert text_of(second) == answer
