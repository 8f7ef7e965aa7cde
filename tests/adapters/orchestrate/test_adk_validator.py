"""The ADK's external-agent validator (``orchestrate evaluations validate-external``,
``ibm-watsonx-orchestrate[agentops]``) against ``agenthost serve``.

The ADK cannot share agenthost's lock (its evaluation framework pins langchain,
pandas and OpenTelemetry ≤1.39): ``.ci/orchestrate_adk.sh`` installs it in a
venv of its own and names that venv's Python in ``AGENTHOST_WXO_PYTHON``;
without it this module skips (``AGENTHOST_REQUIRE_WXO=1`` makes that a failure).
The validator posts streamed turns with each auth scheme Orchestrate offers and
checks every event against its models: text, tool calls and results, and the
``thinking`` steps of an agent whose upstream reasons (the fake upstream's
"reasoner").
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_server import agenthost_serve
from tests.principals import KEYS
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.slow

PYTHON = os.environ.get("AGENTHOST_WXO_PYTHON")
SCRIPT = Path(__file__).with_name("adk_validate.py")

if not PYTHON:
    if os.environ.get("AGENTHOST_REQUIRE_WXO") == "1":
        raise RuntimeError("AGENTHOST_WXO_PYTHON is not set (see .ci/orchestrate_adk.sh)")
    pytest.skip(
        "the ADK's validator runs in a venv of its own: .ci/orchestrate_adk.sh",
        allow_module_level=True,
    )


CONFIG = """\
agents:
  - {name: echo, model: echo, description: Repeats.}
  - {name: adder, import: "tests.adapters.orchestrate.agents:adder"}
  - name: thinker
    model: openai:reasoner
    model_settings: {base_url: "UPSTREAM/v1", api_key: upstream-key}
    tools: [calculator]
"""


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with serve_in_thread(FakeUpstream().app) as url:
        yield url


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory, upstream: str) -> Iterator[str]:
    """``agenthost serve`` as a user runs it, with two keys."""
    keys = ",".join(f"{n}:{k}" for n, k in KEYS.items())
    folder = tmp_path_factory.mktemp("orchestrate")
    config = CONFIG.replace("UPSTREAM", upstream)
    with agenthost_serve(folder, config=config, AGENTHOST_API_KEYS=keys) as (_, url):
        yield url


def validate(url: str, scheme: str, *inputs: str) -> list[dict[str, object]]:
    assert PYTHON is not None
    done = subprocess.run(
        [PYTHON, str(SCRIPT), url, KEYS["alice"], scheme, *inputs],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    results: list[dict[str, object]] = json.loads(done.stdout.splitlines()[-1])
    return results


@pytest.mark.parametrize("scheme", ["API_KEY", "BEARER_TOKEN"])
def test_the_validator_accepts_every_event(base_url: str, scheme: str) -> None:
    results = validate(
        f"{base_url}/orchestrate/adder/chat/completions", scheme, "add 2 and 3", "again"
    )
    assert len(results) == 4 and all(r["success"] for r in results), results
    events = [json.loads(e) for r in results for e in r["logged_events"]]  # type: ignore[attr-defined]
    objects = {e["object"] for e in events}
    assert objects == {"thread.message.delta", "thread.run.step.delta"}
    details = [
        e["choices"][0]["delta"]["step_details"]["type"]
        for e in events
        if "step_details" in e["choices"][0]["delta"]
    ]
    assert set(details) == {"tool_calls", "tool_response"}


def test_the_validator_accepts_thinking_steps(base_url: str) -> None:
    url = f"{base_url}/orchestrate/thinker/chat/completions"
    results = validate(url, "API_KEY", "calculate 2+3")
    assert len(results) == 2 and all(r["success"] for r in results), results
    events = [json.loads(e) for e in results[0]["logged_events"]]  # type: ignore[attr-defined]
    steps = [
        e["choices"][0]["delta"]["step_details"]
        for e in events
        if "step_details" in e["choices"][0]["delta"]
    ]
    assert [s["type"] for s in steps] == ["thinking", "tool_calls", "tool_response", "thinking"]
    assert [s["content"] for s in steps if s["type"] == "thinking"] == [
        "Thinking about calculate 2+3.",
        "Thinking about 5.",
    ]


def test_a_wrong_key_fails_the_validation(base_url: str) -> None:
    url = f"{base_url}/orchestrate/echo/chat/completions"
    done = subprocess.run(
        [PYTHON or "", str(SCRIPT), url, "not-a-key", "API_KEY", "hi"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    results = json.loads(done.stdout.splitlines()[-1])
    assert not any(r["success"] for r in results)
