"""The ``openai`` provider's idle time-out: one deadline per stream, moved by each event.

Against a real aiohttp server that paces its events; and the deadline on its
own, where a cancel from elsewhere must stay a cancel.
"""

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from agenthost.agents import Message, ModelError
from agenthost.agents.models.base import ModelRequest, ModelResponse
from agenthost.agents.models.idle import IdleDeadline
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.options import ModelSettings
from agenthost.agents.results import TextDelta
from tests.aiohttp_upstream import chat_upstream

pytestmark = pytest.mark.anyio

_DELTA = b'data: {"choices":[{"index":0,"delta":{"content":"w "},"finish_reason":null}]}\n\n'
_STOP = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
# model name -> (events, pause before each event after the first, s)
PACES = {"steady": (15, 0.1), "stalls": (2, 30.0)}


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[str, list[str]]]:
    ended: list[str] = []  # how each stream ended: "done" or "left"

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        events, pause = PACES[body["model"]]
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for index in range(events):
            waited = 0.0
            while index and waited < pause:  # watching for the client to leave
                if request.transport is None or request.transport.is_closing():
                    ended.append("left")
                    return response
                await asyncio.sleep(0.02)
                waited += 0.02
            await response.write(_DELTA)
        await response.write(_STOP)
        await response.write_eof()
        ended.append("done")
        return response

    async with chat_upstream(chat) as url:
        yield url, ended


def _provider(url: str, model: str, timeout: float) -> OpenAIModel:
    return OpenAIModel(model, base_url=url, api_key="k", max_retries=0, timeout=timeout)


_REQUEST = ModelRequest(messages=(Message.user("hi"),), settings=ModelSettings())


async def test_a_stream_longer_than_its_timeout_whose_events_keep_coming_completes(
    upstream: tuple[str, list[str]],
) -> None:
    provider = _provider(upstream[0], "steady", timeout=1.0)
    started = time.monotonic()
    try:
        events = [event async for event in provider.stream(_REQUEST)]
    finally:
        await provider.aclose()
    assert time.monotonic() - started > 1.0  # longer than the timeout in all: it moved
    assert len([e for e in events if isinstance(e, TextDelta)]) == 15
    assert isinstance(events[-1], ModelResponse) and events[-1].message.text == "w " * 15


async def test_a_stalled_stream_fails_after_its_timeout_and_closes_the_upstream(
    upstream: tuple[str, list[str]],
) -> None:
    provider = _provider(upstream[0], "stalls", timeout=0.3)
    started = time.monotonic()
    texts = []
    try:
        with pytest.raises(ModelError, match=r"sent nothing for 0\.3 s"):
            async for event in provider.stream(_REQUEST):
                texts.append(event)
    finally:
        await provider.aclose()
    assert time.monotonic() - started < 10
    assert len(texts) == 1
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]
    for _ in range(200):
        if upstream[1]:
            break
        await asyncio.sleep(0.05)
    assert upstream[1] == ["left"]


async def test_a_cancelled_stream_is_cancelled_not_timed_out(
    upstream: tuple[str, list[str]],
) -> None:
    provider = _provider(upstream[0], "stalls", timeout=60)
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in provider.stream(_REQUEST):
            first.set()

    task = asyncio.create_task(consume())
    try:
        await asyncio.wait_for(first.wait(), 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        await provider.aclose()


async def test_a_wait_longer_than_the_timeout_is_cancelled_as_timed_out() -> None:
    deadline = IdleDeadline(0.05)
    outcome = ""
    deadline.arm()
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        outcome = "timed out" if deadline.expired() else "cancelled"
    finally:
        deadline.disarm()
        deadline.close()
    assert outcome == "timed out"
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_an_outside_cancel_at_the_deadline_stays_a_cancel() -> None:
    loop = asyncio.get_running_loop()

    async def wait() -> str:
        deadline = IdleDeadline(0.05)
        deadline.arm()
        current = asyncio.current_task()
        assert current is not None
        loop.call_later(0.06, current.cancel)  # from elsewhere, just after the deadline
        loop.call_soon(time.sleep, 0.2)  # both are due by the time the loop runs timers
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            if deadline.expired():
                return "timed out"
            raise
        finally:
            deadline.disarm()
            deadline.close()
        return "slept"

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(wait())


async def test_waits_that_each_end_in_time_never_time_out() -> None:
    deadline = IdleDeadline(1.0)
    try:
        for _ in range(8):  # 1.2 s of waits in all, more than the timeout
            deadline.arm()
            try:
                await asyncio.sleep(0.15)
            finally:
                deadline.disarm()
            await asyncio.sleep(0.2)  # between waits: not counted
    finally:
        deadline.close()


async def test_a_deadline_that_fires_as_the_wait_ends_takes_its_cancel_back() -> None:
    deadline = IdleDeadline(0.05)
    current = asyncio.current_task()
    assert current is not None
    deadline.arm()
    try:
        time.sleep(0.1)  # noqa: ASYNC251 - the loop is held: the deadline is due before this yields
        await asyncio.sleep(0)  # the cancel lands here...
    except asyncio.CancelledError:
        assert deadline.expired()  # ...and is the deadline's
    finally:
        deadline.disarm()
        deadline.close()
    assert current.cancelling() == 0
    deadline = IdleDeadline(0.05)
    deadline.arm()
    # A wait that swallows the cancel (as some libraries do) and ends normally:
    # the cancel is still taken back when the wait ends.
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        pass
    finally:
        deadline.disarm()
        deadline.close()
    assert current.cancelling() == 0
