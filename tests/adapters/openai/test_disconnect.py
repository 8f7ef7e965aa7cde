"""A client that goes away cancels its run: tools, upstream calls and all.

These run over a real socket (uvicorn in a thread): ``httpx.ASGITransport``
buffers whole responses and never disconnects.
"""

import threading
from collections.abc import Iterator

import httpx
import openai
import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models.openai import OpenAIModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.slow import SlowTool
from tests.upstream import FakeUpstream, serve_in_thread


@pytest.fixture
def slow_tool() -> Iterator[tuple[SlowTool, str]]:
    slow = SlowTool()
    with serve_in_thread(create_app(Settings(), {"slow": slow.agent}), lifespan=True) as url:
        yield slow, url


@pytest.mark.parametrize("endpoint", ["chat", "responses"])
def test_a_client_that_gives_up_on_a_plain_request_cancels_the_tools(
    slow_tool: tuple[SlowTool, str], endpoint: str
) -> None:
    slow, url = slow_tool
    with openai.OpenAI(base_url=f"{url}/v1", api_key="x", timeout=1, max_retries=0) as sdk:
        with pytest.raises(openai.APITimeoutError):
            if endpoint == "chat":
                sdk.chat.completions.create(
                    model="slow", messages=[{"role": "user", "content": "go"}]
                )
            else:
                sdk.responses.create(model="slow", input="go")
        assert slow.started.is_set()
        assert slow.cancelled.wait(5), "the tool kept running after the client left"
        # The server goes on serving.
        assert httpx.get(f"{url}/healthz").status_code == 200


def test_a_client_that_leaves_a_stream_closes_the_upstream_stream(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, upstream_url = upstream
    before = fake.abandoned
    agent = ChatAgent("relay", OpenAIModel("slow", base_url=upstream_url, max_retries=0))
    with (
        serve_in_thread(create_app(Settings(), {"relay": agent}), lifespan=True) as url,
        openai.OpenAI(base_url=f"{url}/v1", api_key="x") as sdk,
    ):
        with sdk.chat.completions.create(
            model="relay", messages=[{"role": "user", "content": "go"}], stream=True
        ) as stream:
            chunks = iter(stream)
            next(chunks), next(chunks)  # the upstream is streaming now
        for _ in range(100):
            if fake.abandoned > before:
                break
            threading.Event().wait(0.05)
        assert fake.abandoned == before + 1
