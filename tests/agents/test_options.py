import pytest

from agenthost.agents import ChatAgent, ModelSettings, RunOptions, UserError, tool
from agenthost.agents.models import FunctionModel, ModelRequest


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


@pytest.mark.anyio
async def test_a_run_reusing_its_options_object_gets_the_same_merge() -> None:
    """An agent reuses its last merge for the same frozen options object (adapters share
    one); the tools and settings each run sees are the fresh merge's."""
    seen: list[tuple[list[str], float | None]] = []

    def reply(request: ModelRequest) -> str:
        seen.append(([t.name for t in request.tools], request.settings.temperature))
        return "ok"

    agent = ChatAgent("a", FunctionModel(reply), model_settings=ModelSettings(top_p=0.5))
    shared = RunOptions(tools=(beta,), model_settings=ModelSettings(temperature=0.1))
    await agent.run("x", options=shared)
    await agent.run("x", options=shared)
    assert agent._merged_options(shared) == agent.options.merged(shared)
    assert seen == [(["beta"], 0.1), (["beta"], 0.1)]
    # A list of tools is copied by each merge: one added later is seen, not a stale merge.
    tools = [alpha]
    listed = RunOptions(tools=tools)
    await agent.run("x", options=listed)
    tools.append(beta)
    await agent.run("x", options=listed)
    assert seen[2:] == [(["alpha"], None), (["alpha", "beta"], None)]
    # The agent's own options replaced (a served copy's): merged again.
    plain = RunOptions(tools=(alpha,))
    await agent.run("x", options=plain)
    agent.options = RunOptions(model_settings=ModelSettings(temperature=0.7))
    await agent.run("x", options=plain)
    assert seen[4:] == [(["alpha"], None), (["alpha"], 0.7)]
