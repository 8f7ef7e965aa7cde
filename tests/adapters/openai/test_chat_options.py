"""``to_run``: a request that sets nothing gets the default options (shared, since they
are frozen); a setting that is set, even to a falsy value, reaches the model."""

from __future__ import annotations

from typing import Any

import pytest

from agenthost.adapters.openai.convert_chat import to_run
from agenthost.adapters.openai.schemas import ChatCompletionRequest
from agenthost.agents import ModelSettings, RunOptions

HI = [{"role": "user", "content": "hi"}]


def run_of(**fields: Any) -> tuple[list[Any], RunOptions]:
    return to_run(ChatCompletionRequest.model_validate({"model": "echo", "messages": HI, **fields}))


def test_a_request_of_messages_only_gets_the_default_options() -> None:
    messages, options = run_of()
    assert [m.text for m in messages] == ["hi"]
    assert options == RunOptions(model_settings=ModelSettings())
    assert run_of()[1] == options


@pytest.mark.parametrize(
    ("fields", "setting", "value"),
    [
        ({"temperature": 0.0}, "temperature", 0.0),
        ({"top_p": 0.0}, "top_p", 0.0),
        ({"seed": 0}, "seed", 0),
        ({"frequency_penalty": 0.0}, "frequency_penalty", 0.0),
        ({"presence_penalty": 0.0}, "presence_penalty", 0.0),
        ({"stop": "END"}, "stop", ("END",)),
        ({"max_completion_tokens": 5}, "max_tokens", 5),
        ({"reasoning_effort": "low"}, "reasoning_effort", "low"),
        ({"tool_choice": "none"}, "tool_choice", "none"),
        ({"response_format": {"type": "json_object"}}, "response_format", {"type": "json_object"}),
    ],
)
def test_a_setting_that_is_set_reaches_the_model_even_when_falsy(
    fields: dict[str, Any], setting: str, value: Any
) -> None:
    _, options = run_of(**fields)
    assert options.model_settings is not None
    assert getattr(options.model_settings, setting) == value
    assert options != RunOptions(model_settings=ModelSettings())


def test_instructions_alone_are_not_the_default_options() -> None:
    system = [{"role": "system", "content": "be brief"}, *HI]
    _, options = to_run(ChatCompletionRequest.model_validate({"model": "e", "messages": system}))
    assert options.instructions == "be brief"
    assert options.model_settings == ModelSettings()
