"""An adapter built on first use (adapters/deferred.py): a process stopped while
its warm-up build runs ends quietly, and a warm-up that fails says so."""

from __future__ import annotations

import logging
import threading
from typing import cast

import anyio
import pytest
from starlette.responses import PlainTextResponse

from agenthost.adapters.base import Adapter
from agenthost.adapters.deferred import DeferredAdapter

pytestmark = pytest.mark.anyio


def _error(status: int, message: str, code: str) -> PlainTextResponse:
    return PlainTextResponse(message, status)


async def test_a_lifespan_ending_during_the_warm_up_build_ends_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    building, release = threading.Event(), threading.Event()

    def build() -> Adapter:
        building.set()
        release.wait(10)
        return cast(Adapter, object())  # never served: the lifespan has ended

    deferred = DeferredAdapter("slow", "/slow", build, error=_error)
    with caplog.at_level(logging.INFO, logger="agenthost"):
        async with deferred.lifespan():
            deferred.warm_up()
            while not building.is_set():
                await _tick()
            release.set()  # the build ends after the lifespan has begun to end
    assert deferred.built is None
    assert not [r for r in caplog.records if "slow" in r.getMessage()], caplog.text


async def test_a_failed_warm_up_is_logged_and_the_next_use_tries_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def build() -> Adapter:
        raise RuntimeError("no SDK here")

    deferred = DeferredAdapter("broken", "/broken", build, error=_error)
    with caplog.at_level(logging.WARNING, logger="agenthost"):
        async with deferred.lifespan():
            deferred.warm_up()
            for _ in range(200):
                if "not built ahead" in caplog.text:
                    break
                await _tick()
    assert "broken: not built ahead of its first request: RuntimeError('no SDK here')" in (
        caplog.text
    )


async def _tick() -> None:
    await anyio.sleep(0.01)
