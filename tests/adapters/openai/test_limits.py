"""Run bounds over /v1: an oversized answer or a long run ends in the OpenAI shape."""

import orjson
import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.limits import RunLimits
from agenthost.agents.models import EchoModel
from agenthost.app.settings import Settings
from tests.conftest import running

pytestmark = pytest.mark.anyio

BIG = "w " * 20_000  # 40,000 characters, echoed back word by word


async def test_an_oversized_stream_ends_with_an_error_event_and_done() -> None:
    settings = Settings(max_output_chars=1000)
    async with running({"echo": ChatAgent("echo", EchoModel())}, settings) as (_, client):
        body = {"model": "echo", "stream": True, "messages": [{"role": "user", "content": BIG}]}
        reply = await client.post("/v1/chat/completions", json=body)
        events = [line for line in reply.text.splitlines() if line.startswith("data: ")]
        assert events[-1] == "data: [DONE]"
        error = orjson.loads(events[-2].removeprefix("data: "))["error"]
        assert error["code"] == "output_limit_exceeded"
        text = "".join(
            chunk["choices"][0]["delta"].get("content") or ""
            for chunk in (orjson.loads(e.removeprefix("data: ")) for e in events[:-2])
        )
        assert 0 < len(text) <= 1000
        responses = await client.post(
            "/v1/responses", json={"model": "echo", "input": BIG, "stream": True}
        )
        assert '"code":"output_limit_exceeded"' in responses.text
        assert "event: response.failed" in responses.text or '"response.failed"' in responses.text


async def test_an_oversized_answer_is_a_400_and_an_agent_limit_beats_the_global_one() -> None:
    agent = ChatAgent("echo", EchoModel())
    agent.limits = RunLimits(max_output_chars=10)
    async with running({"echo": agent}, Settings(max_output_chars=1000)) as (_, client):
        body = {"model": "echo", "messages": [{"role": "user", "content": "far more than ten"}]}
        reply = await client.post("/v1/chat/completions", json=body)
        assert reply.status_code == 400
        assert reply.json()["error"]["code"] == "output_limit_exceeded"
        body["messages"][0]["content"] = "short"  # type: ignore[index]
        assert (await client.post("/v1/chat/completions", json=body)).status_code == 200
