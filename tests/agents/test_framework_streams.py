"""A framework's stream in a task of its own: what a cancelled run leaves open is closed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from agenthost.agents.frameworks.streams import Finished, stream_in_task

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_what_the_producer_emits_then_its_result() -> None:
    async def produce(emit: Callable[[str], None]) -> int:
        emit("a")
        emit("b")
        return 2

    assert [item async for item in stream_in_task(produce)] == ["a", "b", Finished(2)]


async def test_leaving_closes_a_generator_the_framework_left_suspended() -> None:
    """As BeeAI's chat model does: it takes a token from its model stream, then is
    cancelled while it handles the token; the stream is in a reference cycle, so
    only the garbage collector would close it."""
    closed = asyncio.Event()

    async def model_stream() -> AsyncIterator[str]:
        try:
            while True:
                yield "token"
        finally:
            closed.set()

    async def produce(emit: Callable[[str], None]) -> None:
        stream = model_stream()
        cycle: list[object] = [stream]
        cycle.append(cycle)
        emit(await anext(stream))
        await asyncio.Event().wait()  # handling the token

    updates = stream_in_task(produce)
    assert await anext(updates) == "token"
    await updates.aclose()
    assert closed.is_set()
