"""Every example config passes `agenthost check`; those that need no key answer when served."""

import re
from pathlib import Path

import anyio
import pytest

from agenthost.app.build import load_agents
from agenthost.app.cli import main
from tests.conftest import openai_client

EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"
# Composition examples of this package (other examples may live in the same folder).
NEED_A_KEY = {"handoff.yaml"}
KEYLESS = sorted(
    p.name
    for p in EXAMPLES.glob("*.yaml")
    if p.name.startswith(
        ("memory-", "pipeline", "workflow", "templates", "pydantic-ai", "langgraph")
    )
)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_agenthost_check_accepts_the_example(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if name == "crewai.yaml":  # CrewAI lives in an environment of its own (openai<3, mcp<2)
        pytest.importorskip("crewai")
    if name in NEED_A_KEY:
        # OpenAI's own API with no key: refused, saying what to set.
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        assert main(["check", "--config", str(EXAMPLES / name)]) == 2
        assert "no API key: set OPENAI_API_KEY" in capsys.readouterr().err
        monkeypatch.setenv("OPENAI_API_KEY", "sk-example")
    assert main(["check", "--config", str(EXAMPLES / name)]) == 0
    assert re.search(r"\b(1 agent|\d+ agents) OK$", capsys.readouterr().out.strip())


def test_every_composition_feature_has_an_example() -> None:
    expected = {
        "memory-unconstrained.yaml",
        "memory-sliding-window.yaml",
        "memory-token-budget.yaml",
        "memory-summarize.yaml",
        "handoff.yaml",
        "pipeline.yaml",
        "workflow.yaml",
        "templates.yaml",
        "pydantic-ai.yaml",
        "langgraph.yaml",
    }
    assert expected <= {p.name for p in EXAMPLES.glob("*.yaml")}
    assert set(KEYLESS) == expected - NEED_A_KEY


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("name", KEYLESS)
async def test_the_example_answers_when_served(name: str) -> None:
    config, registry = load_agents(EXAMPLES / name)
    first = config.agents[0].name  # the agent each example is about
    with anyio.fail_after(90):
        async with openai_client(registry) as client:
            completion = await client.chat.completions.create(
                model=first, messages=[{"role": "user", "content": "Tell me about the sea."}]
            )
    assert (completion.choices[0].message.content or "").strip()
