"""The Grafana dashboard asks only for metrics agenthost exports."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from agenthost.agents import Message, RunResult
from agenthost.agents.tools import ToolEvent
from agenthost.app.metrics import Metrics, current_protocol

DASHBOARD = Path(__file__).parents[2] / "deploy" / "grafana" / "agenthost.json"

pytestmark = pytest.mark.anyio


@dataclass
class Store:
    namespace: str = "openai"
    size: int = 3
    evictions: int = 1


async def exported() -> set[str]:
    """Every sample name of a registry where each metric has moved once."""
    metrics = Metrics(["echo"], ["calculator"])
    metrics.watch_sessions(lambda: [Store()])
    token = current_protocol.set("openai")
    run = metrics.run_started("echo")
    current_protocol.reset(token)
    run.first_text()
    run.finished(RunResult("hi", [Message.user("hi")]), None)
    finish = ToolEvent("finish", "calculator", "call_1", 1, {}, 0.01)
    for hook in metrics.tool_hooks("echo"):
        await hook.on_tool_event(finish)
    metrics.upstream_observer("echo").upstream_request("ok")
    families = text_string_to_metric_families(metrics.exposition().decode())
    return {sample.name for family in families for sample in family.samples}


async def test_every_query_names_an_exported_metric() -> None:
    names = await exported()
    dashboard = json.loads(DASHBOARD.read_text())
    queries = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    queries += [
        v["query"]["query"]
        for v in dashboard["templating"]["list"]
        if "query" in v and isinstance(v["query"], dict)
    ]
    named = {name for query in queries for name in re.findall(r"agenthost_\w+", query)}
    assert len(named) >= 10 and named <= names, named - names
