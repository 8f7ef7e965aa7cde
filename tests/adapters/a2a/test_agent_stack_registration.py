"""Registering agents with a running Agent Stack (``AGENTHOST_A2A_AGENT_STACK_REGISTER``),
against a small fake of the platform's provider API served on a real socket (the
platform itself is a Kubernetes deployment of many services, not installable in a test):
the calls the agentstack-sdk's own self-registration makes, in the same order."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from agenthost.adapters.a2a import agent_stack
from agenthost.adapters.a2a.agent_stack_registration import (
    SELF_REGISTRATION,
    PlatformRegistrar,
)
from agenthost.app.server import create_app
from tests.adapters.a2a.agent_stack_platform import FakePlatform, registered_card
from tests.adapters.a2a.support import a2a_settings
from tests.upstream import free_port, serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PUBLIC = "http://agents.example:9000"
TOKEN = "platform-token-789"
CONFIG = """agents:
  - {name: helper, description: Helps., model: echo, a2a: {agent_stack: true}}
  - {name: plain, model: echo}
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def platform() -> Iterator[tuple[FakePlatform, str]]:
    fake = FakePlatform()
    with serve_in_thread(fake.app) as url:
        yield fake, url


def test_the_server_registers_its_agent_stack_agents_at_start(
    platform: tuple[FakePlatform, str], tmp_path: Any
) -> None:
    fake, url = platform
    config = tmp_path / "agents.yaml"
    config.write_text(CONFIG)
    settings = a2a_settings(
        config=config,
        a2a_public_url=PUBLIC,
        a2a_agent_stack_register=True,
        a2a_agent_stack_platform_url=url,
        a2a_agent_stack_platform_token=TOKEN,
    )
    with serve_in_thread(create_app(settings), lifespan=True) as served:
        registered_card(fake)
        card = httpx.get(f"{served}/a2a/helper/.well-known/agent-card.json").json()
    where = f"{PUBLIC}/a2a/helper#helper"
    assert [(m, p, auth) for m, p, auth, _ in fake.calls] == [
        ("GET", f"/api/v1/providers/by-location/{where}", f"Bearer {TOKEN}"),
        ("POST", "/api/v1/providers", f"Bearer {TOKEN}"),
    ]  # the plain agent is not an Agent Stack agent: not registered
    body = fake.calls[1][3]
    assert body["location"] == where
    registered = body["agent_card"]
    assert registered["name"] == "helper"
    assert registered["url"] == f"{PUBLIC}/a2a/helper"  # the 0.3 card field the platform reads
    extensions = {e["uri"]: e.get("params") for e in registered["capabilities"]["extensions"]}
    assert extensions[SELF_REGISTRATION] == {"self_registration_id": "helper"}
    assert agent_stack.AGENT_DETAIL in extensions
    served_extensions = {e["uri"] for e in card["capabilities"]["extensions"]}
    assert SELF_REGISTRATION in served_extensions


async def test_a_registered_agent_is_updated_not_added_again(
    platform: tuple[FakePlatform, str],
) -> None:
    fake, url = platform
    where = f"{PUBLIC}/a2a/helper#helper"
    registrar = PlatformRegistrar(url)
    try:
        first = await registrar.register_all({where: {"name": "helper", "version": "1"}})
        again = await registrar.register_all({where: {"name": "helper", "version": "2"}})
    finally:
        await registrar.aclose()
    assert first == again == {where: "p-1"}
    assert [m for m, *_ in fake.calls] == ["GET", "POST", "GET", "PATCH"]
    assert fake.calls[-1][1] == "/api/v1/providers/p-1"
    assert fake.calls[-1][2] is None  # no token set: no Authorization header
    assert fake.providers["p-1"]["agent_card"]["version"] == "2"


async def test_a_refusal_is_logged_and_not_retried(
    platform: tuple[FakePlatform, str], caplog: pytest.LogCaptureFixture
) -> None:
    fake, url = platform
    fake.status = 422
    registrar = PlatformRegistrar(url, longest_wait=0.01)
    try:
        assert await registrar.register_all({f"{PUBLIC}/a2a/x#x": {"name": "x"}}) == {}
    finally:
        await registrar.aclose()
    assert len(fake.calls) == 1
    assert "refused to register" in caplog.text and "422" in caplog.text


async def test_a_failing_platform_is_retried_then_given_up(
    platform: tuple[FakePlatform, str], caplog: pytest.LogCaptureFixture
) -> None:
    fake, url = platform
    fake.status = 503
    registrar = PlatformRegistrar(url, attempts=3, longest_wait=0.01)
    try:
        assert await registrar.register_all({f"{PUBLIC}/a2a/x#x": {"name": "x"}}) == {}
    finally:
        await registrar.aclose()
    assert len(fake.calls) == 3


async def test_an_unreachable_platform_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    registrar = PlatformRegistrar(f"http://127.0.0.1:{free_port()}", attempts=2, longest_wait=0.01)
    try:
        assert await registrar.register_all({f"{PUBLIC}/a2a/x#x": {"name": "x"}}) == {}
    finally:
        await registrar.aclose()
    assert "could not be reached" in caplog.text


def test_registering_needs_a_public_url() -> None:
    with pytest.raises(ValidationError, match="AGENTHOST_A2A_PUBLIC_URL"):
        a2a_settings(a2a_agent_stack_register=True)
