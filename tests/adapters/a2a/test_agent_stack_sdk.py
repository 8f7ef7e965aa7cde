"""IBM Agent Stack's client side (``agentstack-sdk``) against ``agenthost serve``.

The SDK pins ``a2a-sdk==0.3.24``, which cannot share agenthost's lock:
``.ci/agent_stack_sdk.sh`` installs it in a venv of its own (from
``.ci/agent_stack_sdk.lock``) and names that venv's Python in
``AGENTHOST_AGENT_STACK_PYTHON``; without it this module skips
(``AGENTHOST_REQUIRE_AGENT_STACK=1`` makes that a failure). The SDK reads the
card's extensions over A2A 0.3, sends a message with an LLM fulfilment pointing
at a fake upstream, parses the trajectory entries of the tool call and of the model's
reasoning, citations and error details, and answers an ``ask_user`` question shown as
a form (one text field, or typed fields), and a tool call's approval request, with the
SDK's own models; the
card agenthost registers with a (fake) platform is read by the SDK's 0.3 card model
and its self-registration spec.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthost.app.server import create_app
from tests.adapters.a2a.agent_stack_platform import FakePlatform, registered_card
from tests.adapters.a2a.agent_stack_tools import SOURCES
from tests.adapters.a2a.support import a2a_settings
from tests.adapters.approvals import ARGUMENTS, RAN, WAS_DECLINED
from tests.app.test_server import agenthost_serve
from tests.upstream import FakeUpstream, serve_in_thread

pytestmark = pytest.mark.slow

PYTHON = os.environ.get("AGENTHOST_AGENT_STACK_PYTHON")
SCRIPT = Path(__file__).with_name("agent_stack_client.py")
ROOT = Path(__file__).parents[3]

if not PYTHON:
    if os.environ.get("AGENTHOST_REQUIRE_AGENT_STACK") == "1":
        raise RuntimeError("AGENTHOST_AGENT_STACK_PYTHON is not set (see .ci/agent_stack_sdk.sh)")
    pytest.skip(
        "the agentstack-sdk runs in a venv of its own: .ci/agent_stack_sdk.sh",
        allow_module_level=True,
    )

PLATFORM_KEY = "platform-key-456"
CONFIG = """\
agents:
  - name: helper
    description: Calculates for Agent Stack.
    model: agentstack
    tools: [calculator, ask_user, "tests.adapters.a2a.agent_stack_tools:search"]
  - {name: stacker, import: "tests.adapters.approvals:stacker"}
"""


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[FakeUpstream, str]]:
    fake = FakeUpstream()
    with serve_in_thread(fake.app) as url:
        yield fake, url


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``agenthost serve`` as a user runs it, with Agent Stack's extensions on for all."""
    folder = tmp_path_factory.mktemp("agentstack")
    env = {"AGENTHOST_A2A_AGENT_STACK": "true", "PYTHONPATH": str(ROOT)}  # the tests' agents
    with agenthost_serve(folder, config=CONFIG, **env) as (_, url):
        yield url


def run_client(url: str, llm_base: str, model: str, *texts: str) -> dict[str, object]:
    assert PYTHON is not None
    done = subprocess.run(
        [PYTHON, str(SCRIPT), url, llm_base, PLATFORM_KEY, model, *texts],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_the_sdk_reads_the_card_and_the_agent_uses_the_platform_model(
    base_url: str, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, llm = upstream
    seen = len(fake.keys)
    result = run_client(f"{base_url}/a2a/helper", f"{llm}/v1", "platform-model", "calculate 6*7")
    assert str(result["protocol"]).startswith("0.3")
    detail = result["detail"]
    assert isinstance(detail, dict)
    assert detail["framework"] == "agenthost"
    assert detail["interaction_mode"] == "multi-turn"
    assert [tool["name"] for tool in detail["tools"]] == ["calculator", "ask_user", "search"]
    assert result["demands"] == ["default"]
    assert result["state"] == "completed"
    assert str(result["text"]).strip() == "The result is 42."
    # The upstream saw the platform's key, not one of agenthost's.
    assert fake.keys[seen:] == [f"Bearer {PLATFORM_KEY}"] * 2
    assert {r["model"] for r in fake.requests[seen:]} == {"platform-model"}
    trajectories = result["trajectories"]
    assert isinstance(trajectories, list)
    assert [(t["title"], t["content"]) for t in trajectories] == [
        ("calculator", '{"expression": "6*7"}'),
        ("calculator", "42"),
    ]


def test_the_sdk_reads_the_reasoning_of_each_step_as_a_trajectory_entry(
    base_url: str, upstream: tuple[FakeUpstream, str]
) -> None:
    _, llm = upstream  # the platform's model reasons, as vLLM and DeepSeek send it
    result = run_client(f"{base_url}/a2a/helper", f"{llm}/v1", "reasoner", "calculate 6*7")
    assert result["state"] == "completed"
    assert str(result["text"]).strip() == "The result is 42."
    trajectories = result["trajectories"]
    assert isinstance(trajectories, list)
    assert [(t["title"], t["content"], t["group_id"]) for t in trajectories] == [
        ("Reasoning", "Thinking about calculate 6*7.", None),
        ("calculator", '{"expression": "6*7"}', "call_up_1"),
        ("calculator", "42", "call_up_1"),
        ("Reasoning", "Thinking about 42.", None),
    ]


def test_an_upstream_failure_comes_with_error_details(
    base_url: str, upstream: tuple[FakeUpstream, str]
) -> None:
    _, llm = upstream
    result = run_client(f"{base_url}/a2a/helper", f"{llm}/v1", "broken", "hello")
    assert result["state"] == "failed"
    errors = result["errors"]
    assert isinstance(errors, list) and len(errors) == 1
    assert errors[0]["error"]["title"] and errors[0]["error"]["message"]


def test_a_question_is_a_form_the_sdk_answers(
    base_url: str, upstream: tuple[FakeUpstream, str]
) -> None:
    _, llm = upstream
    ask = 'use ask_user with {"question": "Which city?"}'
    result = run_client(f"{base_url}/a2a/helper", f"{llm}/v1", "platform-model", ask, "Paris")
    forms = result["forms"]
    assert isinstance(forms, list) and len(forms) == 1
    assert forms[0]["title"] == "Which city?"
    assert forms[0]["fields"][0]["type"] == "text"
    assert result["state"] == "completed"
    assert str(result["text"]).strip() == "The result is Paris."


def test_a_form_of_typed_fields_the_sdk_answers(
    base_url: str, upstream: tuple[FakeUpstream, str]
) -> None:
    _, llm = upstream
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "title": "City"},
            "guests": {"type": "integer", "title": "Guests"},
            "day": {"type": "string", "format": "date"},
            "seating": {"type": "string", "enum": ["in", "out"]},
            "extras": {"type": "array", "items": {"enum": ["wine", "cake"]}},
            "vegan": {"type": "boolean", "description": "Vegan menu"},
        },
        "required": ["city"],
    }
    ask = "use ask_user with " + json.dumps({"question": "Book a table?", "schema": schema})
    answer = {
        "city": "Paris",
        "guests": "4",
        "day": "2026-12-24",
        "seating": "out",
        "extras": ["cake"],
        "vegan": True,
    }
    url = f"{base_url}/a2a/helper"
    result = run_client(url, f"{llm}/v1", "platform-model", ask, json.dumps(answer))
    forms = result["forms"]
    assert isinstance(forms, list) and len(forms) == 1  # validated by the SDK's FormRender
    assert [(f["id"], f["type"]) for f in forms[0]["fields"]] == [
        ("city", "text"),
        ("guests", "text"),
        ("day", "date"),
        ("seating", "singleselect"),
        ("extras", "multiselect"),
        ("vegan", "checkbox"),
    ]
    assert result["state"] == "completed"
    text = str(result["text"]).strip().removeprefix("The result is ").removesuffix(".")
    assert json.loads(text) == {"action": "accept", "content": {**answer, "guests": 4}}


@pytest.mark.parametrize(("decision", "answer"), [("approve", RAN), ("reject", WAS_DECLINED)])
def test_an_approval_the_sdk_answers(base_url: str, decision: str, answer: str) -> None:
    # The stacker agent runs in the server's process: its answer says whether the tool ran.
    result = run_client(f"{base_url}/a2a/stacker", "", "", "tidy up", decision)
    assert result["forms"] == []
    assert result["approvals"] == [
        {
            "action": "tool-call",
            "title": "delete_file",
            "description": "Delete a file.",
            "name": "delete_file",
            "input": json.loads(ARGUMENTS),
            "server": None,
        }
    ]
    assert result["state"] == "completed"
    assert str(result["text"]).strip() == answer


def test_the_sdk_reads_the_citations_of_a_tool(
    base_url: str, upstream: tuple[FakeUpstream, str]
) -> None:
    _, llm = upstream
    ask = 'use search with {"query": "agenthost"}'
    result = run_client(f"{base_url}/a2a/helper", f"{llm}/v1", "platform-model", ask)
    assert result["state"] == "completed"
    assert result["citations"] == [
        {
            "url": "https://example.org/agenthost",
            "title": "agenthost",
            "description": "One process serves every agent.",
            "start_index": None,
            "end_index": None,
        },
        {
            "url": SOURCES[1],
            "title": None,
            "description": None,
            "start_index": None,
            "end_index": None,
        },
    ]


CHECK_CARD = """
import json, sys
from a2a.types import AgentCard
from agentstack_sdk.a2a.extensions import AgentDetailExtensionSpec
from agentstack_sdk.a2a.extensions.services.platform import _PlatformSelfRegistrationExtensionSpec
card = AgentCard.model_validate(json.load(sys.stdin))
spec = _PlatformSelfRegistrationExtensionSpec.from_agent_card(card)
detail = AgentDetailExtensionSpec.from_agent_card(card)
print(json.dumps({"url": card.url, "id": spec.params.self_registration_id,
                  "framework": detail.params.framework}))
"""


def test_the_registered_card_is_one_the_sdk_reads(tmp_path: Path) -> None:
    fake = FakePlatform()
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - {name: helper, model: echo, a2a: {agent_stack: true}}\n")
    with serve_in_thread(fake.app) as platform_url:
        settings = a2a_settings(
            config=config,
            a2a_public_url="http://agents.example:9000",
            a2a_agent_stack_register=True,
            a2a_agent_stack_platform_url=platform_url,
        )
        with serve_in_thread(create_app(settings), lifespan=True):
            card = registered_card(fake)
    assert PYTHON is not None
    done = subprocess.run(
        [PYTHON, "-c", CHECK_CARD], input=json.dumps(card), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "url": "http://agents.example:9000/a2a/helper",
        "id": "helper",
        "framework": "agenthost",
    }
