"""AG-UI in-process: every event parsed by ag-ui-protocol's own types; text, the agent's
tools, client tools, interrupts, threads, errors."""

from __future__ import annotations

import pytest
from ag_ui.core import EventType

from agenthost.agents import ASK_USER, ChatAgent, ModelBusy, tool
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.agents.models.testing import Reply, call
from tests.adapters.ag_ui.clients import ag_ui_client, run, run_input, text_of, types, user
from tests.principals import transcript_model

pytestmark = pytest.mark.anyio

E = EventType


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _adder(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"The sum is {last.parts[0].content}."  # type: ignore[union-attr]
    return ["Let me add. ", call("add", '{"a": 2, "b": 3}')]


def _weather(request: ModelRequest) -> Reply:
    """Calls the client's get_weather tool, then reports what it returned."""
    last = request.messages[-1]
    if last.role == "tool":
        return f"The weather: {last.parts[0].content}"  # type: ignore[union-attr]
    assert any(t.name == "get_weather" for t in request.tools)
    return call("get_weather", '{"city": "Paris"}')


def _asker(request: ModelRequest) -> Reply:
    last = request.messages[-1]
    if last.role == "tool":
        return f"Nice to meet you, {last.parts[0].content}."  # type: ignore[union-attr]
    return ["Hello! ", call("ask_user", '{"question": "What is your name?"}')]


def _failing(request: ModelRequest) -> Reply:
    raise ModelBusy("the upstream is busy")


AGENTS = {
    "echo": ChatAgent("echo", EchoModel()),
    "t": ChatAgent("t", transcript_model()),
    "adder": ChatAgent("adder", FunctionModel(_adder), tools=(add,)),
    "weather": ChatAgent("weather", FunctionModel(_weather)),
    "asker": ChatAgent("asker", FunctionModel(_asker), tools=(ASK_USER,)),
    "failing": ChatAgent("failing", FunctionModel(_failing)),
}

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


async def test_a_text_run_streams_one_message_between_start_and_finish() -> None:
    async with ag_ui_client(AGENTS) as client:
        body = run_input([user("hello there")])
        events = await run(client, "echo", body)
    assert types(events)[0] == E.RUN_STARTED and types(events)[-1] == E.RUN_FINISHED
    started, finished = events[0], events[-1]
    assert started.protocol_version == "1.0"  # type: ignore[attr-defined]
    assert started.thread_id == body["threadId"] and started.run_id == body["runId"]  # type: ignore[attr-defined]
    assert finished.thread_id == body["threadId"] and finished.run_id == body["runId"]  # type: ignore[attr-defined]
    assert types(events)[1] == E.TEXT_MESSAGE_START and types(events)[-2] == E.TEXT_MESSAGE_END
    assert text_of(events) == "hello there"
    ids = {e.message_id for e in events if e.type.name.startswith("TEXT_MESSAGE")}  # type: ignore[attr-defined]
    assert len(ids) == 1
    [usage] = finished.usage  # type: ignore[attr-defined]
    assert usage.input_tokens is not None and usage.total_tokens == (
        usage.input_tokens + usage.output_tokens
    )


async def test_the_agents_own_tool_shows_as_a_call_with_its_result() -> None:
    async with ag_ui_client(AGENTS) as client:
        events = await run(client, "adder", run_input([user("2 + 3?")]))
    shown = [t for n, t in enumerate(types(events)) if n == 0 or t != types(events)[n - 1]]
    assert shown == [
        E.RUN_STARTED,
        E.TEXT_MESSAGE_START,
        E.TEXT_MESSAGE_CONTENT,
        E.TEXT_MESSAGE_END,
        E.TOOL_CALL_START,
        E.TOOL_CALL_ARGS,
        E.TOOL_CALL_END,
        E.TOOL_CALL_RESULT,
        E.TEXT_MESSAGE_START,
        E.TEXT_MESSAGE_CONTENT,
        E.TEXT_MESSAGE_END,
        E.RUN_FINISHED,
    ]
    [start] = [e for e in events if e.type == E.TOOL_CALL_START]
    [args] = [e for e in events if e.type == E.TOOL_CALL_ARGS]
    [result] = [e for e in events if e.type == E.TOOL_CALL_RESULT]
    assert start.tool_call_name == "add"  # type: ignore[attr-defined]
    assert args.delta == '{"a": 2, "b": 3}'  # type: ignore[attr-defined]
    assert result.tool_call_id == start.tool_call_id and result.content == "5"  # type: ignore[attr-defined]
    assert text_of(events) == "Let me add. \n\nThe sum is 5."
    assert events[-1].outcome is None  # type: ignore[attr-defined]


async def test_a_client_tool_ends_the_run_and_the_next_input_carries_its_result() -> None:
    async with ag_ui_client(AGENTS) as client:
        question = user("weather in Paris?")
        body = run_input([question], tools=[WEATHER_TOOL])
        first = await run(client, "weather", body)
        assert types(first) == [
            E.RUN_STARTED,
            E.TOOL_CALL_START,
            E.TOOL_CALL_ARGS,
            E.TOOL_CALL_END,
            E.RUN_FINISHED,
        ]
        start, args = first[1], first[2]
        assert start.tool_call_name == "get_weather"  # type: ignore[attr-defined]
        assert args.delta == '{"city": "Paris"}'  # type: ignore[attr-defined]
        outcome = first[-1].outcome  # type: ignore[attr-defined]
        assert outcome.type == "success" and outcome.pending_tool_call_ids == [start.tool_call_id]  # type: ignore[attr-defined]
        # As HttpAgent does: the whole thread again, with the tool's result.
        call_id = start.tool_call_id  # type: ignore[attr-defined]
        messages = [
            question,
            {
                "id": "a1",
                "role": "assistant",
                "toolCalls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"id": "t1", "role": "tool", "toolCallId": call_id, "content": "sunny, 21 °C"},
        ]
        second = await run(
            client, "weather", run_input(messages, body["threadId"], tools=[WEATHER_TOOL])
        )
    assert text_of(second) == "The weather: sunny, 21 °C"
    assert types(second)[-1] == E.RUN_FINISHED


async def test_ask_user_is_an_interrupt_that_resume_answers() -> None:
    async with ag_ui_client(AGENTS) as client:
        hello = user("hi")
        body = run_input([hello])
        first = await run(client, "asker", body)
        assert E.TOOL_CALL_START not in types(first)
        assert text_of(first) == "Hello! "
        outcome = first[-1].outcome  # type: ignore[attr-defined]
        assert outcome.type == "interrupt"
        [interrupt] = outcome.interrupts
        assert interrupt.message == "What is your name?" and interrupt.reason == "input_required"
        resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": "Ada"}]
        messages = [hello, {"id": "a1", "role": "assistant", "content": "Hello! "}]
        second = await run(client, "asker", run_input(messages, body["threadId"], resume=resume))
        assert text_of(second) == "Nice to meet you, Ada."
        assert second[-1].outcome is None  # type: ignore[attr-defined]
        # An interrupt no longer open is refused.
        again = run_input(messages, body["threadId"], resume=resume)
        response = await client.post("/asker", json=again)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"


async def test_a_thread_continues_the_conversation_and_another_does_not() -> None:
    async with ag_ui_client(AGENTS) as client:
        first_message = user("my name is Ada")
        body = run_input([first_message])
        await run(client, "t", body)
        # HttpAgent sends the whole thread again: only the new message is new.
        messages = [
            first_message,
            {"id": "a1", "role": "assistant", "content": "my name is Ada"},
            user("what is my name?"),
        ]
        second = await run(client, "t", run_input(messages, body["threadId"]))
        assert text_of(second) == "my name is Ada | my name is Ada | what is my name?"
        other = await run(client, "t", run_input([user("who am I?")]))
    assert text_of(other) == "who am I?"


async def test_system_messages_and_context_become_instructions() -> None:
    seen: list[str] = []

    def reply(request: ModelRequest) -> Reply:
        seen.append(request.messages[0].text)
        return "ok"

    agents = {"probe": ChatAgent("probe", FunctionModel(reply))}
    async with ag_ui_client(agents) as client:
        messages = [{"id": "s", "role": "system", "content": "Be brief."}, user("hi")]
        context = [{"description": "the user's city", "value": "Paris"}]
        await run(client, "probe", run_input(messages, context=context))
    assert "Be brief." in seen[0] and "the user's city: Paris" in seen[0]


async def test_a_failing_run_ends_with_run_error() -> None:
    async with ag_ui_client(AGENTS) as client:
        events = await run(client, "failing", run_input([user("hi")]))
    assert types(events) == [E.RUN_STARTED, E.RUN_ERROR]
    assert events[-1].code == "busy" and "busy" in events[-1].message  # type: ignore[attr-defined]


async def test_an_unknown_agent_is_a_404_in_json() -> None:
    async with ag_ui_client(AGENTS) as client:
        response = await client.post("/nobody", json=run_input([user("hi")]))
        route = await client.get("/nobody/else")
        method = await client.get("/echo")
    assert response.status_code == 404
    assert response.json() == {
        "error": {"code": "agent_not_found", "message": "agent 'nobody' not found"}
    }
    assert route.status_code == 404 and route.json()["error"]["code"] == "route_not_found"
    assert method.status_code == 405 and method.headers["allow"] == "POST"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, "invalid_json"),
        (b'{"threadId": "t"}', 422, "invalid_input"),
        (b'{"threadId": "t", "runId": "r", "messages": [{"role": "user"}]}', 422, "invalid_input"),
        (b'{"threadId": "t", "runId": "r", "messages": []}', 422, "invalid_input"),
        (
            b'{"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", '
            b'"content": [{"type": "image", "source": {"type": "url", "value": "http://x/y.png"}}]}]}',
            422,
            "invalid_input",
        ),
    ],
)
async def test_bad_input_is_a_4xx_naming_the_problem(body: bytes, status: int, code: str) -> None:
    async with ag_ui_client(AGENTS) as client:
        response = await client.post(
            "/echo", content=body, headers={"content-type": "application/json"}
        )
        form = await client.post("/echo", content=b"a=b", headers={"content-type": "text/plain"})
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]
    assert form.status_code == 415
