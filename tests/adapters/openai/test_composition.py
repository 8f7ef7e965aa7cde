"""Handoff, pipelines and workflows served over /v1 with the openai SDK.

The nested updates of sub-agents are progress the OpenAI wire format has no
place for: the adapter skips them and streams the answer.
"""

import httpx
import openai
import pytest
from pydantic import BaseModel

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.composition import SELF, AgentTool, FunctionStep, PipelineAgent, WorkflowAgent
from agenthost.agents.models import FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.testing import Reply, call
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.blocking import Blocker
from tests.completions import complete
from tests.conftest import openai_client
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio


class Counter(BaseModel):
    input: str
    count: int = 0
    output: str = ""


def team() -> dict[str, Agent]:
    def lead_reply(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "tool":
            return f"The expert said: {last.parts[0].content}"  # type: ignore[union-attr]
        return call("expert", '{"task": "' + last.text + '"}')

    expert = ChatAgent("expert", FunctionModel(lambda r: f"expert answer to {r.messages[-1].text}"))
    lead = ChatAgent("lead", FunctionModel(lead_reply), tools=(AgentTool(expert),))
    upper = ChatAgent("upper", FunctionModel(lambda r: r.messages[-1].text.upper()))
    exclaim = ChatAgent("exclaim", FunctionModel(lambda r: r.messages[-1].text + "!"))

    def count(state: Counter) -> str | None:
        state.count += 1
        state.output = f"{state.input} counted {state.count}"
        return None if state.count >= 3 else SELF

    return {
        "lead": lead,
        "expert": expert,
        "loud": PipelineAgent("loud", [upper, exclaim]),
        "counting": WorkflowAgent("counting", Counter, [FunctionStep("count", count)]),
        "spinning": WorkflowAgent(
            "spinning", Counter, [FunctionStep("spin", lambda s: SELF)], max_steps=5
        ),
    }


async def answer(client: openai.AsyncOpenAI, model: str, text: str, *, stream: bool) -> str:
    return "".join(
        await complete(client, model, [{"role": "user", "content": text}], stream=stream)
    )


@pytest.mark.parametrize("stream", [False, True])
async def test_the_right_agent_answers(stream: bool) -> None:
    async with openai_client(team()) as client:
        assert await answer(client, "lead", "why?", stream=stream) == (
            "The expert said: expert answer to why?"
        )
        assert await answer(client, "loud", "hello", stream=stream) == "HELLO!"
        assert await answer(client, "counting", "sheep", stream=stream) == "sheep counted 3"


async def test_responses_streams_a_handoff_answer() -> None:
    async with openai_client(team()) as client:
        stream = await client.responses.create(model="lead", input="why?", stream=True)
        deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "The expert said: expert answer to why?"


async def test_the_step_limit_is_an_agent_error() -> None:
    async with openai_client(team()) as client:
        with pytest.raises(openai.InternalServerError, match="did not reach END within 5 steps"):
            await client.chat.completions.create(
                model="spinning", messages=[{"role": "user", "content": "go"}]
            )


@pytest.mark.slow
def test_a_client_leaving_cancels_the_running_step() -> None:
    blocker = Blocker()
    slow = WorkflowAgent("slow", Counter, [FunctionStep("wait", blocker.block)])
    handing = ChatAgent(
        "handing", ScriptedModel([call("slow", '{"task": "x"}'), "late"]), tools=(AgentTool(slow),)
    )
    agents: dict[str, Agent] = {"slow": slow, "handing": handing}
    with (
        serve_in_thread(create_app(Settings(), agents), lifespan=True) as url,
        openai.OpenAI(base_url=f"{url}/v1", api_key="x", timeout=1, max_retries=0) as sdk,
    ):
        with pytest.raises(openai.APITimeoutError):
            sdk.chat.completions.create(
                model="handing", messages=[{"role": "user", "content": "go"}]
            )
        assert blocker.started.is_set()
        assert blocker.cancelled.wait(5), "the sub-agent's step kept running after the client left"
        assert httpx.get(f"{url}/healthz").status_code == 200


@pytest.mark.parametrize("model", ["loud", "counting"])
async def test_client_tools_are_refused_by_pipelines_and_workflows(model: str) -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    async with openai_client(team()) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            await client.chat.completions.create(
                model=model,
                messages=[{"role": "user", "content": "go"}],
                tools=[tool],  # type: ignore[list-item]
            )
    assert caught.value.body["param"] == "tools"  # type: ignore[index]
