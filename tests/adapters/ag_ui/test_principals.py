"""Principals on /ag-ui: a thread belongs to the API key that ran it."""

from __future__ import annotations

import pytest

from agenthost.agents import ChatAgent
from tests.adapters.ag_ui.clients import ag_ui_client, ag_ui_settings, run, run_input, text_of, user
from tests.principals import KEYS, SECRET, bearer, transcript_model

pytestmark = pytest.mark.anyio

AGENTS = {"t": ChatAgent("t", transcript_model())}


async def test_another_key_cannot_continue_a_thread_and_the_owner_still_can() -> None:
    settings = ag_ui_settings(api_keys=[f"{n}:{k}" for n, k in KEYS.items()])
    async with ag_ui_client(AGENTS, settings) as client:
        thread = "shared-looking-thread"
        await run(client, "t", run_input([user(SECRET)], thread), headers=bearer("alice"))
        bob = await run(
            client, "t", run_input([user("what did I say?")], thread), headers=bearer("bob")
        )
        assert SECRET not in text_of(bob)
        alice = await run(
            client, "t", run_input([user("and now?")], thread), headers=bearer("alice")
        )
        assert SECRET in text_of(alice)
        anonymous = await client.post("/t", json=run_input([user("hi")]))
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["message"]
