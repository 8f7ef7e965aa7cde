"""A tool that needs approval as watsonx Orchestrate calls the agent: the question is
the answer's text (no step shown), and the next turn on the thread decides: yes runs
the call once, no never runs it and the model is told."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import httpx
import pytest

from agenthost.app.settings import Settings
from tests.adapters.approvals import QUESTION, RAN, WAS_DECLINED, Deleter
from tests.adapters.orchestrate.clients import api_key, complete, stream, user
from tests.adapters.orchestrate.spec import steps_of, text_of
from tests.conftest import running
from tests.principals import KEYS

pytestmark = pytest.mark.anyio

DELETER = Deleter()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        adapters=["orchestrate"],  # type: ignore[list-item]
        api_keys=[f"{n}:{k}" for n, k in KEYS.items()],
    )
    async with running({"deleter": DELETER.agent}, settings) as (_, http):
        http.headers.update(api_key("alice"))
        yield http


@pytest.mark.parametrize(("reply", "answer", "runs"), [("yes", RAN, 1), ("no", WAS_DECLINED, 0)])
async def test_an_approval_is_asked_in_text_and_the_next_turn_decides(
    client: httpx.AsyncClient, reply: str, answer: str, runs: int
) -> None:
    DELETER.deleted.clear()
    thread = str(uuid.uuid4())
    first = await stream(client, "deleter", [user("tidy up")], thread=thread)
    assert text_of(first) == QUESTION
    assert not steps_of(first) and DELETER.deleted == []
    transcript = [user("tidy up"), {"role": "assistant", "content": QUESTION}, user(reply)]
    second = await complete(client, "deleter", transcript, thread=thread)
    assert second.choices[0].message.content == answer
    assert DELETER.deleted == ["/tmp/notes.txt"] * runs
