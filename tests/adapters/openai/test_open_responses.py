"""``/v1/responses`` objects against the Open Responses specification (openresponses.org).

The spec's published OpenAPI document, as the ``openresponses-types``
package's generated models (mozilla.ai): every response object, plain and
in each streamed event, must validate; an assistant message's ``phase`` is
accepted and kept.
"""

import json
from typing import Any

import pytest
from openresponses_types import types as spec

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel, ScriptedModel
from agenthost.agents.models.testing import call
from tests.adapters.openai.clients import running

pytestmark = pytest.mark.anyio

TOOL = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}


def agents() -> dict[str, Agent]:
    return {
        "echo": ChatAgent("echo", EchoModel()),
        "caller": ChatAgent("caller", ScriptedModel([call("lookup", '{"q": 1}')] * 2)),
    }


def events(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line.removeprefix("data: "))
        for line in body.splitlines()
        if line.startswith("data: ")
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"model": "echo", "input": "hello"},
        {"model": "echo", "input": "hi", "presence_penalty": 0.5, "safety_identifier": "s"},
        {"model": "caller", "input": "find", "tools": [TOOL]},
    ],
)
async def test_plain_and_streamed_responses_validate(body: dict[str, Any]) -> None:
    async with running(agents()) as (_, http):
        plain = await http.post("/v1/responses", json=body)
        assert plain.status_code == 200, plain.text
        response = spec.ResponseResource.model_validate(plain.json())
        assert response.presence_penalty == body.get("presence_penalty", 0.0)
        stored = await http.get(f"/v1/responses/{response.id}")
        assert spec.ResponseResource.model_validate(stored.json()) == response
        streamed = await http.post("/v1/responses", json={**body, "stream": True})
    seen = events(streamed.text)
    objects = [e["response"] for e in seen if "response" in e]
    assert [o["status"] for o in objects] == ["in_progress", "in_progress", "completed"]
    for data in objects:
        spec.ResponseResource.model_validate(data)


async def test_an_assistant_phase_is_kept() -> None:
    message = {
        "type": "message",
        "role": "assistant",
        "phase": "commentary",
        "content": [{"type": "output_text", "text": "thinking"}],
    }
    async with running(agents()) as (_, http):
        made = await http.post(
            "/v1/responses",
            json={"model": "echo", "input": [message, {"role": "user", "content": "go"}]},
        )
        assert made.status_code == 200, made.text
        listed = await http.get(f"/v1/responses/{made.json()['id']}/input_items?order=asc")
    assert listed.json()["data"][0]["phase"] == "commentary"
