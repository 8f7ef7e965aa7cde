"""Whatever a client sends, the OpenAI surface answers 2xx or a 4xx in the
OpenAI error envelope, never a 5xx, and keeps serving."""

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from agenthost.adapters.openai.schemas import ChatCompletionRequest, ResponseRequest
from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from tests.conftest import running

pytestmark = pytest.mark.anyio

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def mutations(valid: dict[str, Any], fields: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """A valid body with some known fields (and nested items) set to arbitrary JSON."""
    keys = st.sampled_from(fields) | st.text(max_size=8)
    changes = st.dictionaries(keys, json_values, max_size=4)
    items = st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "role": st.sampled_from(["user", "system", "assistant", "tool", "developer"])
                | json_values,
                "content": json_values,
                "type": st.sampled_from(["message", "function_call", "function_call_output"])
                | json_values,
                "tool_calls": json_values,
                "call_id": json_values,
            },
        ),
        max_size=3,
    )
    list_field = "messages" if "messages" in valid else "input"
    return st.tuples(changes, items, st.booleans()).map(
        lambda t: {**valid, **({list_field: t[1]} if t[2] else {}), **t[0]}
    )


def encode(value: Any) -> bytes:
    return json.dumps(value).encode()  # big integers too, unlike orjson


def bodies(valid: dict[str, Any], fields: list[str]) -> st.SearchStrategy[bytes]:
    """Mutated valid bodies, arbitrary JSON and raw bytes."""
    return st.one_of(
        mutations(valid, fields).map(encode),
        json_values.map(encode),
        st.binary(max_size=64),
    )


CHAT = {"model": "echo", "messages": [{"role": "user", "content": "hi"}]}
RESPONSES = {"model": "echo", "input": "hi"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with running({"echo": ChatAgent("echo", EchoModel())}) as (_, client):
        yield client


def assert_answered(response: httpx.Response) -> None:
    event(f"status {response.status_code}")
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error["message"], str) and error["message"]
        assert set(error) == {"message", "type", "param", "code"}


JSON = {"content-type": "application/json"}  # else every body is a 415 before parsing
fuzz = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


@fuzz
@given(body=bodies(CHAT, list(ChatCompletionRequest.model_fields)))
async def test_chat_completions_never_fail_on_input(client: httpx.AsyncClient, body: bytes) -> None:
    assert_answered(await client.post("/v1/chat/completions", content=body, headers=JSON))


@fuzz
@given(body=bodies(RESPONSES, list(ResponseRequest.model_fields)))
async def test_responses_never_fail_on_input(client: httpx.AsyncClient, body: bytes) -> None:
    assert_answered(await client.post("/v1/responses", content=body, headers=JSON))
