import pytest

from agenthost.agents import ModelSettings, RunOptions, UserError, tool


@tool
def alpha() -> str:
    """A."""
    return "a"


@tool
def beta() -> str:
    """B."""
    return "b"


def test_none_means_not_set() -> None:
    base = RunOptions(model_settings=ModelSettings(temperature=0.2, max_tokens=10), max_steps=3)
    merged = base.merged(RunOptions(model_settings=ModelSettings(max_tokens=5)))
    assert merged.model_settings == ModelSettings(temperature=0.2, max_tokens=5)
    assert merged.max_steps == 3


def test_instructions_concatenate() -> None:
    merged = RunOptions(instructions="Agent.").merged(RunOptions(instructions="Run."))
    assert merged.instructions == "Agent.\n\nRun."
    assert RunOptions().merged(RunOptions()).instructions is None


def test_tools_merge_and_duplicates_are_refused() -> None:
    merged = RunOptions(tools=[alpha]).merged(RunOptions(tools=[beta]))
    assert [t.name for t in merged.tools or ()] == ["alpha", "beta"]
    with pytest.raises(UserError, match="duplicate tool name 'alpha'"):
        RunOptions(tools=[alpha]).merged(RunOptions(tools=[alpha]))
