import asyncio
import logging
import re
import time

import pytest

from agenthost.app.watchdog import watch_loop

pytestmark = pytest.mark.anyio


def block_the_loop() -> None:
    time.sleep(0.3)


async def test_a_stall_is_logged_and_counted_naming_the_task_and_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "agenthost.watchdog")
    async with watch_loop(0.1) as watchdog:
        assert watchdog is not None
        await asyncio.sleep(0.1)
        assert watchdog.stalls == 0

        async def culprit() -> None:
            block_the_loop()

        await asyncio.create_task(culprit(), name="the-culprit")
        await asyncio.sleep(0.05)
    assert watchdog.stalls == 1 and 0.2 < watchdog.longest < 1
    messages = [r.getMessage() for r in caplog.records]
    assert any(
        "over 100 ms by task 'the-culprit'" in m and "in block_the_loop" in m for m in messages
    ), messages
    assert any(re.match(r"event loop blocked for [23]\d\d ms by task", m) for m in messages)


async def test_a_threshold_of_0_turns_it_off() -> None:
    async with watch_loop(0) as watchdog:
        assert watchdog is None
