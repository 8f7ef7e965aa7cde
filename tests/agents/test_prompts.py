"""Prompt templates: declared variables, computed values, refusals, copies."""

import datetime as dt

import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.agents.prompts import PromptTemplate, TemplateProblem
from agenthost.agents.tools import calculator

pytestmark = pytest.mark.anyio


def test_variables_and_computed_values_are_filled() -> None:
    template = PromptTemplate(
        "You are {{ agent }} for {{ product }}, {{ tone }}. Today is {{ today }}. "
        "Tools: {{ tools | join(', ') }}.",
        {"product": None, "tone": "friendly"},
    ).customise({"product": "Acme"})
    template.check()
    text = template.render(agent="support", tools=["calculator", "current_time"])
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert text == (
        f"You are support for Acme, friendly. Today is {today}. Tools: calculator, current_time."
    )


def test_a_missing_or_undeclared_variable_is_refused() -> None:
    with pytest.raises(TemplateProblem, match="no value for product"):
        PromptTemplate("For {{ product }}.", {"product": None}).check()
    with pytest.raises(TemplateProblem, match="undeclared variables: product"):
        PromptTemplate("For {{ product }}.")
    with pytest.raises(TemplateProblem, match="has no variable colour"):
        PromptTemplate("Hi.", {"product": None}).customise({"colour": "red"})
    with pytest.raises(TemplateProblem, match="template 'instructions'"):
        PromptTemplate("{% if %}")


def test_customising_copies_the_template() -> None:
    library = PromptTemplate("For {{ product }}.", {"product": "nothing"}, name="base")
    first = library.customise({"product": "Acme"})
    second = library.customise({"product": "Globex"})
    assert first.render(agent="a", tools=[]) == "For Acme."
    assert second.render(agent="b", tools=[]) == "For Globex."
    assert library.render(agent="c", tools=[]) == "For nothing."
    assert dict(library.values) == {}


def test_the_sandbox_keeps_python_out_of_reach() -> None:
    template = PromptTemplate("{{ agent.__class__.__mro__ }}")
    with pytest.raises(TemplateProblem):
        template.render(agent="a", tools=[])


async def test_a_chat_agent_renders_its_template_for_each_run() -> None:
    seen: list[str] = []

    def reply(request: ModelRequest) -> str:
        seen.append(request.messages[0].text)
        return "ok"

    template = PromptTemplate("I am {{ agent }}; tools: {{ tools | join(',') }}.")
    agent = ChatAgent("helper", FunctionModel(reply), instructions=template, tools=(calculator,))
    await agent.run("hi")
    assert seen == ["I am helper; tools: calculator."]
