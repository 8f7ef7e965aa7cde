"""``notifications/cancelled`` in stateless mode: a POST of its own stops the call it names.

Raw JSON-RPC over a real socket (uvicorn in a thread) against the fake
OpenAI upstream, which counts the streams its client left before the end.
Only the principal that made the call can cancel it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import anyio
import httpx
import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import mcp_settings
from tests.principals import KEYS, bearer
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ACCEPT = {"accept": "application/json, text/event-stream"}


def call(request_id: int | str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": "relay",
            "arguments": {"message": "go"},
            "_meta": {"progressToken": "p"},
        },
    }


def cancel(request_id: int | str) -> dict[str, object]:
    params = {"requestId": request_id, "reason": "user pressed stop"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


@pytest.fixture(scope="module")
def served(upstream: tuple[FakeUpstream, str]) -> Iterator[str]:
    agent = ChatAgent("relay", OpenAIModel("slow", base_url=upstream[1], max_retries=0))
    settings = mcp_settings(
        mcp_stateless=True,
        mcp_progress_interval=0.0,
        api_keys=[f"{n}:{k}" for n, k in KEYS.items()],
    )
    with serve_in_thread(create_app(settings, {"relay": agent}), lifespan=True) as url:
        yield url


async def progress_events(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    async for line in lines:
        if line.startswith("data:"):
            yield line


async def wait_abandoned(fake: FakeUpstream, count: int) -> None:
    for _ in range(500):  # the upstream runs in another thread: poll it for 10 s
        if fake.abandoned >= count:
            return
        await anyio.sleep(0.02)
    raise AssertionError("the upstream stream outlived the cancelled call")


@pytest.mark.parametrize("request_id", [7, "call-7"])
async def test_a_cancel_of_its_own_stops_the_run_and_another_keys_does_not(
    served: str, upstream: tuple[FakeUpstream, str], request_id: int | str
) -> None:
    fake = upstream[0]
    before = fake.abandoned
    async with httpx.AsyncClient(base_url=served, headers=ACCEPT, timeout=30) as client:
        alice, bob = bearer("alice"), bearer("bob")
        async with client.stream("POST", "/mcp", json=call(request_id), headers=alice) as stream:
            events = progress_events(stream.aiter_lines())
            assert "notifications/progress" in await anext(events)
            refused = await client.post("/mcp", json=cancel(request_id), headers=bob)
            assert refused.status_code == 202
            # Bob's cancel was applied (or not) before its 202: the run goes on for Alice.
            for _ in range(5):
                assert "notifications/progress" in await anext(events)
            assert fake.abandoned == before
            cancelled = await client.post("/mcp", json=cancel(request_id), headers=alice)
            assert cancelled.status_code == 202
            await wait_abandoned(fake, before + 1)
            # The call's stream ends with the cancellation, not with a result.
            last = [event async for event in events][-1]
            assert '"code":-32800' in last.replace(" ", ""), last
        # The server still serves the principal that cancelled.
        listed = await client.post(
            "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=alice
        )
        assert listed.status_code == 200 and "relay" in listed.text
