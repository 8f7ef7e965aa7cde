"""/v1 refuses what RFC 8259 forbids, in the words of the JSON check, though pydantic's
own parser (jiter) reads some of it: NaN, ±Infinity and overflowing numbers become
floats there, so a body must never reach the model's JSON validation unchecked."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import BaseModel

from agenthost.adapters.body_limits import BodyProblem, load_json, refusal
from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from tests.adapters.openai.clients import running

pytestmark = pytest.mark.anyio

HEAD = b'{"model": "echo", "messages": [{"role": "user", "content": "hi"}], '
# What jiter reads as a float (so the check must see it first), and what it refuses itself.
JITER_READS = {
    "NaN": HEAD + b'"metadata_x": NaN}',
    "Infinity": HEAD + b'"response_format": {"type": "json_object", "x": Infinity}}',
    "-Infinity": HEAD + b'"temperature": -Infinity}',
    "1e999999": HEAD + b'"extra": [1e999999]}',
    "320 digits": HEAD + b'"extra": 1' + b"0" * 320 + b".0}",
}
JITER_REFUSES = {
    "lone high surrogate": HEAD + b'"user": "\\ud800"}',
    "lone low surrogate": HEAD + b'"user": "\\udc00"}',
    "high then not low": HEAD + b'"user": "\\ud800\\u0041"}',
    "surrogate key": HEAD + b'"\\udfff": 1}',
    "UTF-8 surrogate": HEAD + b'"user": "\xed\xa0\x80"}',
    "not UTF-8": HEAD + b'"user": "\xff"}',
    "trailing comma": HEAD + b'"user": "x",}',
    "10,000 deep": HEAD + b'"extra": ' + b"[" * 10_000 + b"]" * 10_000 + b"}",
}


class _Any(BaseModel):
    x: Any = None


def expected(body: bytes) -> tuple[str, str]:
    with pytest.raises(BodyProblem) as refused:
        load_json(body)
    problem = refused.value
    return ("invalid_json" if problem.limit is None else "body_too_complex"), refusal(problem)


@pytest.mark.parametrize("raw", [b'{"x": NaN}', b'{"x": Infinity}', b'{"x": 1e999999}'])
def test_pydantic_alone_reads_non_finite_numbers(raw: bytes) -> None:
    """Why the check parses too: if this fails, jiter refuses them and one parse may do."""
    value = _Any.model_validate_json(raw).x
    assert isinstance(value, float) and not math.isfinite(value)


async def test_json_the_rfc_forbids_is_a_400_in_the_checks_words() -> None:
    async with running({"echo": ChatAgent("echo", EchoModel())}) as (_, client):
        for name, body in {**JITER_READS, **JITER_REFUSES}.items():
            code, message = expected(body)
            headers = {"content-type": "application/json"}
            answer = await client.post("/v1/chat/completions", content=body, headers=headers)
            assert answer.status_code == 400, (name, answer.text)
            error = answer.json()["error"]
            assert (error["code"], error["message"]) == (code, message), name
        body = HEAD + b'"user": "x"}'
        answer = await client.post("/v1/chat/completions", content=body, headers=headers)
        assert answer.status_code == 200, answer.text  # the server keeps serving
