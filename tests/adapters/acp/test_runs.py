"""IBM ACP with the real acp-sdk client, in-process: agents, runs in every mode, sessions."""

import asyncio

import httpx
import pytest
from acp_sdk.client import Client
from acp_sdk.models import (
    ACPError,
    Message,
    MessageAwaitResume,
    MessagePart,
    RunStatus,
    TrajectoryMetadata,
)
from acp_sdk.shared import ResourceLoader

from agenthost.agents import ASK_USER, ChatAgent, tool
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest, ScriptedModel
from agenthost.agents.models.openai import OpenAIModel
from agenthost.agents.models.testing import Reply, call
from agenthost.agents.tools import calculator
from tests.adapters.acp.clients import acp_client
from tests.principals import transcript_model
from tests.upstream import FakeUpstream

pytestmark = [
    pytest.mark.anyio,
    # acp-sdk's ResourceLoader caches loads for the process (async_lru), and it
    # warns when a second test's event loop loads history.
    pytest.mark.filterwarnings("ignore::async_lru.AlruCacheLoopResetWarning"),
]


def _asker() -> ChatAgent:
    """Asks the user's name with ask_user, then greets them."""

    def reply(request: ModelRequest) -> Reply:
        last = request.messages[-1]
        if last.role == "tool":
            return f"Nice to meet you, {last.parts[0].content}."  # type: ignore[union-attr]
        return ["Hello! ", call("ask_user", '{"question": "What is your name?"}')]

    return ChatAgent("asker", FunctionModel(reply), tools=(ASK_USER,))


AGENTS = {
    "echo": ChatAgent("echo", EchoModel(), description="Repeats what you say."),
    "t": ChatAgent("t", transcript_model()),
}


async def test_lists_the_agents_with_their_manifests() -> None:
    agents = {**AGENTS, "calc": ChatAgent("calc", EchoModel(), tools=(calculator,))}
    async with acp_client(agents) as client:
        await client.ping()
        listed = [agent async for agent in client.agents()]
        assert [a.name for a in listed] == ["echo", "t", "calc"]
        echo = await client.agent(name="echo")
        assert echo.description == "Repeats what you say."
        assert "text/plain" in echo.input_content_types
        assert echo.output_content_types == ["text/plain"]
        assert echo.metadata.recommended_models == ["echo"]
        calc = await client.agent(name="calc")
        assert [c.name for c in calc.metadata.capabilities or []] == ["calculator"]


async def test_a_sync_run_answers_with_the_agents_message() -> None:
    async with acp_client(AGENTS) as client:
        run = await client.run_sync("hello there", agent="echo")
        assert run.status == RunStatus.COMPLETED and run.agent_name == "echo"
        assert run.session_id is not None and run.finished_at is not None
        [message] = run.output
        assert message.role == "agent/echo" and str(message) == "hello there"
        # Consecutive text deltas are one part of the stored message.
        assert len(message.parts) == 1


async def test_an_async_run_is_polled_to_completion() -> None:
    async with acp_client(AGENTS) as client:
        run = await client.run_async("poll me", agent="echo")
        assert run.status in (RunStatus.CREATED, RunStatus.IN_PROGRESS)
        for _ in range(100):
            run = await client.run_status(run_id=run.run_id)
            if run.status.is_terminal:
                break
            await asyncio.sleep(0.01)
        assert run.status == RunStatus.COMPLETED and str(run.output[0]) == "poll me"
        events = [event.type async for event in client.run_events(run_id=run.run_id)]
        assert events[:3] == ["run.created", "run.in-progress", "message.created"]
        assert events[-2:] == ["message.completed", "run.completed"]
        assert events.count("message.part") == 2


async def test_runs_in_a_session_see_the_earlier_runs() -> None:
    async with acp_client(AGENTS) as client, client.session() as session:
        first = await session.run_sync("my name is Ada", agent="t")
        second = await session.run_sync("what is my name?", agent="t")
        assert first.session_id == second.session_id
        assert "my name is Ada" in str(second.output[0])
        # Another session starts afresh.
        other = await client.run_sync("who am I?", agent="t")
        assert "Ada" not in str(other.output[0])
        # The session and its history, as acp-sdk reads them.
        read = await session.refresh_session()
        assert len(read.history) == 4
        history = [m async for m in read.load_history(loader=_loader(client))]
        assert [m.role for m in history] == ["user", "agent/t", "user", "agent/t"]
        assert str(history[0]) == "my name is Ada"


async def test_a_sessions_history_is_in_time_order_across_agents() -> None:
    async with acp_client(AGENTS) as client, client.session() as session:
        for text, agent in [("one", "t"), ("two", "echo"), ("three", "t")]:
            await session.run_sync(text, agent=agent)
        read = await session.refresh_session()
        history = [m async for m in read.load_history(loader=_loader(client))]
    roles = [m.role for m in history]
    assert roles == ["user", "agent/t", "user", "agent/echo", "user", "agent/t"]
    assert [str(m) for m in history if m.role == "user"] == ["one", "two", "three"]
    assert str(history[3]) == "two"


async def test_several_input_parts_reach_the_model_apart(
    upstream: tuple[FakeUpstream, str],
) -> None:
    fake, url = upstream
    provider = OpenAIModel("gpt-test", base_url=url, api_key="sk-test", max_retries=0)
    agents = {"echo": AGENTS["echo"], "up": ChatAgent("up", provider)}
    parts = [
        MessagePart(content='{"a":1}', content_type="application/json"),
        MessagePart(content="first", content_type="text/plain"),
        MessagePart(content="second", content_type="text/plain"),
    ]
    try:
        async with acp_client(agents) as client:
            echoed = await client.run_sync(Message(parts=parts[1:]), agent="echo")
            await client.run_sync(Message(parts=parts), agent="up")
    finally:
        await provider.aclose()
    # Text parts a blank line apart; the JSON value is a part of its own too.
    assert str(echoed.output[0]) == "first\n\nsecond"
    sent = fake.requests[-1]["messages"][-1]
    assert sent == {"role": "user", "content": '{"a":1}\n\nfirst\n\nsecond'}


def _loader(client: Client) -> ResourceLoader:
    return ResourceLoader(client=client.client)


async def test_the_agents_own_tool_calls_show_as_trajectory_parts() -> None:
    model = ScriptedModel([call("calculator", '{"expression": "2+2"}'), "It is 4."])
    agents = {"calc": ChatAgent("calc", model, tools=(calculator,))}
    async with acp_client(agents) as client:
        run = await client.run_sync("what is 2+2?", agent="calc")
        parts = run.output[0].parts
        started, finished = (p.metadata for p in parts[:2])
        assert started is not None and started.kind == "trajectory"
        assert started.tool_name == "calculator"
        assert started.tool_input is not None and started.tool_input.model_dump() == {
            "expression": "2+2"
        }
        assert finished is not None and finished.kind == "trajectory"
        assert finished.tool_output is not None
        assert finished.tool_output.model_dump() == {"content": "4", "is_error": False}
        assert str(run.output[0]) == "It is 4."


async def test_a_question_makes_the_run_await_and_the_reply_resumes_it() -> None:
    async with acp_client({"asker": _asker()}) as client:
        run = await client.run_sync("hi", agent="asker")
        assert run.status == RunStatus.AWAITING
        assert run.await_request is not None
        assert str(run.await_request.message) == "What is your name?"
        assert str(run.output[0]) == "Hello! "
        answer = Message(parts=[MessagePart(content="Ada")])
        resumed = await client.run_resume_sync(
            MessageAwaitResume(message=answer), run_id=run.run_id
        )
        assert resumed.status == RunStatus.COMPLETED and resumed.await_request is None
        assert str(resumed.output[-1]) == "Nice to meet you, Ada."
        # Nothing awaits any more: resuming again is refused in ACP's shape.
        with pytest.raises(ACPError) as refused:
            await client.run_resume_sync(MessageAwaitResume(message=answer), run_id=run.run_id)
        assert refused.value.error.code == "invalid_input"


async def test_an_awaiting_run_resumes_in_a_stream() -> None:
    async with acp_client({"asker": _asker()}) as client:
        run = await client.run_sync("hi", agent="asker")
        answer = MessageAwaitResume(message=Message(parts=[MessagePart(content="Bo")]))
        events = [e async for e in client.run_resume_stream(answer, run_id=run.run_id)]
        assert events[0].type == "run.in-progress" and events[-1].type == "run.completed"


async def test_an_awaiting_run_can_be_cancelled() -> None:
    async with acp_client({"asker": _asker()}) as client:
        run = await client.run_sync("hi", agent="asker")
        cancelled = await client.run_cancel(run_id=run.run_id)
        assert cancelled.status == RunStatus.CANCELLED
        with pytest.raises(ACPError, match="already cancelled"):
            await client.run_cancel(run_id=run.run_id)


async def test_a_failing_agent_gives_a_failed_run() -> None:
    def boom(request: ModelRequest) -> Reply:
        raise RuntimeError("the model broke")

    agents = {"bad": ChatAgent("bad", FunctionModel(boom))}
    async with acp_client(agents) as client:
        run = await client.run_sync("hi", agent="bad")
        assert run.status == RunStatus.FAILED
        assert run.error is not None and run.error.code == "server_error"
        assert "RuntimeError" in run.error.message  # named, not its (internal) text
        with pytest.raises(ACPError):
            run.raise_for_status()


async def test_unknown_agent_run_and_session_are_404_not_found() -> None:
    async with acp_client(AGENTS) as client:
        for attempt in (
            client.agent(name="nobody"),
            client.run_sync("hi", agent="nobody"),
            client.run_status(run_id="0b4c9b2e-1111-4111-8111-111111111111"),  # type: ignore[arg-type]
            client.run_cancel(run_id="0b4c9b2e-1111-4111-8111-111111111111"),  # type: ignore[arg-type]
        ):
            with pytest.raises(ACPError) as missing:
                await attempt
            assert missing.value.error.code == "not_found"
        http = client.client
        for path in (
            "/runs/not-a-uuid",
            "/sessions/0b4c9b2e-1111-4111-8111-111111111111",
            "/no/such/route",
        ):
            answer = await http.get(path)
            assert answer.status_code == 404 and answer.json()["code"] == "not_found"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"{not json", 400),
        (b"[]", 422),
        (b'{"agent_name": "echo"}', 422),
        (b'{"agent_name": "echo", "input": [], "mode": "sync"}', 422),
        (b'{"agent_name": "echo", "input": [{"parts": []}], "mode": "never"}', 422),
        (b'{"agent_name": "echo", "input": [{"role": "robot", "parts": []}]}', 422),
        (
            b'{"agent_name": "echo", "input": [{"parts": [{"content": "{",'
            b' "content_type": "application/json"}]}]}',
            422,
        ),
    ],
)
async def test_malformed_bodies_get_an_acp_error(body: bytes, status: int) -> None:
    async with acp_client(AGENTS) as client:
        answer = await client.client.post("/runs", content=body)
        assert answer.status_code == status, answer.text
        error = answer.json()
        assert error["code"] == "invalid_input" and error["message"] and "data" in error
        # The server goes on serving.
        assert (await client.run_sync("still here", agent="echo")).status == "completed"


async def test_every_run_answer_names_the_run_in_a_header() -> None:
    async with acp_client(AGENTS) as client:
        http = client.client
        body = b'{"agent_name": "echo", "input": [{"parts": [{"content": "hi"}]}]}'
        created = await http.post("/runs", content=body)  # no Content-Type, like acp-sdk
        run_id = created.json()["run_id"]
        assert created.headers["Run-ID"] == run_id
        assert (await http.get(f"/runs/{run_id}")).headers["Run-ID"] == run_id
        assert (await http.get(f"/runs/{run_id}/events")).headers["Run-ID"] == run_id


async def test_the_openai_surface_still_answers_beside_acp() -> None:
    async with acp_client(AGENTS) as client:
        transport = client.client._transport
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            models = await http.get("/v1/models")
        assert [m["id"] for m in models.json()["data"]] == ["echo", "t"]


async def test_a_tool_error_is_the_models_business_not_the_runs() -> None:
    @tool
    def broken() -> str:
        """Always fails."""
        raise ValueError("nope")

    model = ScriptedModel([call("broken"), "The tool failed."])
    async with acp_client({"b": ChatAgent("b", model, tools=(broken,))}) as client:
        run = await client.run_sync("go", agent="b")
        assert run.status == RunStatus.COMPLETED
        finished = run.output[0].parts[1].metadata
        assert isinstance(finished, TrajectoryMetadata) and finished.tool_output is not None
        assert finished.tool_output.model_dump()["is_error"] is True
