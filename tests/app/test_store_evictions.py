"""A2A tasks and IBM ACP runs dropped for room are counted in GET /metrics."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.settings import Settings
from tests.adapters.openai.clients import running

pytestmark = pytest.mark.anyio


def echo() -> dict[str, Agent]:
    return {"echo": ChatAgent("echo", EchoModel())}


async def test_evicted_tasks_and_runs_are_counted() -> None:
    settings = Settings(
        adapters=["a2a", "acp"], playground=False, a2a_task_max=1, acp_max_runs=1, a2a_grpc_port=0
    )
    async with running(echo(), settings) as (_, client):
        for n in range(3):
            message = {"messageId": f"m-{n}", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            body = {
                "jsonrpc": "2.0",
                "id": n,
                "method": "SendMessage",
                "params": {"message": message},
            }
            sent = await client.post("/a2a/echo", json=body, headers={"A2A-Version": "1.0"})
            assert sent.status_code == 200 and "result" in sent.json(), sent.text
            part = {"content": "hi", "content_type": "text/plain"}
            run = {
                "agent_name": "echo",
                "input": [{"role": "user", "parts": [part]}],
                "mode": "sync",
            }
            assert (await client.post("/acp/runs", json=run)).status_code == 200
        text = (await client.get("/metrics")).text
    samples = {
        (s.labels["protocol"], s.labels["store"]): s.value
        for family in text_string_to_metric_families(text)
        if family.name == "agenthost_store_evictions"
        for s in family.samples
        if s.name.endswith("_total")
    }
    assert samples[("a2a", "tasks")] == 2  # three finished tasks, one kept
    assert samples[("acp", "runs")] == 2  # each new run makes room: the older one goes
    assert samples[("a2a", "push_configs")] == 0
