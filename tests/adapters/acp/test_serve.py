"""``agenthost serve`` with ACP switched on, driven by acp-sdk over a real socket."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_sdk.client import Client

from tests.commands import serving

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

CONFIG = """
agents:
  - name: echo
    description: Repeats what you say.
    model: echo
  - name: hidden
    model: echo
    expose: [openai]
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    config = tmp_path / "agents.yaml"
    config.write_text(CONFIG)
    with serving(config, {**os.environ, "AGENTHOST_ADAPTERS": "openai,acp"}) as (_, url):
        yield url


async def test_the_served_app_speaks_acp_beside_openai(served: str) -> None:
    async with Client(base_url=f"{served}/acp", timeout=10) as client:
        # `expose: [openai]` keeps an agent off ACP.
        assert [agent.name async for agent in client.agents()] == ["echo"]
        run = await client.run_sync("over a socket", agent="echo")
        assert str(run.output[0]) == "over a socket"
        models = (await client.client.get(f"{served}/v1/models")).json()
    assert [m["id"] for m in models["data"]] == ["echo", "hidden"]
