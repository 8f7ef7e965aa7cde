"""Background responses in one process: create, retrieve, stream again after N, cancel
(the openai SDK's own calls; replicas and kills are in tests/scale/test_durable_runs.py)."""

from __future__ import annotations

import asyncio

import anyio
import openai
import pytest

from agenthost.agents import ChatAgent, Message, TextDelta, tool
from agenthost.agents.frameworks.langgraph import LangGraphAgent
from agenthost.agents.models.base import BaseChatModel, ModelRequest, ModelResponse
from agenthost.agents.models.testing import FunctionModel, Reply, call
from agenthost.agents.results import Usage
from tests.adapters.openai.clients import openai_client
from tests.agents.test_langgraph import researcher

pytestmark = pytest.mark.anyio


class Words(BaseChatModel):
    """Streams ``count`` words, ``pause`` seconds apart."""

    name = "words"

    def __init__(self, count: int = 8, pause: float = 0.02) -> None:
        self.count, self.pause = count, pause

    async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        words = [f"w{i} " for i in range(self.count)]
        for word in words:
            await anyio.sleep(self.pause)
            yield TextDelta(word)
        yield ModelResponse(Message.assistant("".join(words)), Usage(3, len(words), 1))


calls: list[str] = []


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    calls.append(f"{a}+{b}")
    return a + b


async def _adding(request: ModelRequest) -> Reply:
    if request.messages[-1].role == "tool":
        return f"the sum is {request.messages[-1].parts[0].content}"  # type: ignore[union-attr]
    return call("add", '{"a": 2, "b": 3}')


AGENTS = {
    "words": ChatAgent("words", Words()),
    "slow": ChatAgent("slow", Words(count=1000, pause=0.05)),
    "adder": ChatAgent("adder", FunctionModel(_adding), tools=(add,)),
}


async def _settled(client: openai.AsyncOpenAI, id: str) -> openai.types.responses.Response:
    with anyio.fail_after(10):
        while True:
            response = await client.responses.retrieve(id)
            if response.status not in ("queued", "in_progress"):
                return response
            await asyncio.sleep(0.02)


async def test_a_background_response_answers_at_once_and_completes_later() -> None:
    async with openai_client(AGENTS) as client:
        created = await client.responses.create(model="words", input="hi", background=True)
        assert created.status in ("queued", "in_progress")
        assert created.background is True
        done = await _settled(client, created.id)
    assert done.status == "completed"
    assert done.output_text == "".join(f"w{i} " for i in range(8))


async def test_its_stream_is_picked_up_after_any_event_without_gap_or_repeat() -> None:
    async with openai_client(AGENTS) as client:
        created = await client.responses.create(model="words", input="hi", background=True)
        stream = await client.responses.retrieve(created.id, stream=True)
        whole = [event async for event in stream]
        numbers = [e.sequence_number for e in whole]
        assert numbers == list(range(len(whole)))
        assert whole[-1].type == "response.completed"
        for cut in (0, 3, len(whole) - 2):
            again = await client.responses.retrieve(created.id, stream=True, starting_after=cut)
            rest = [event async for event in again]
            assert [e.sequence_number for e in rest] == numbers[cut + 1 :]
            assert [e.type for e in rest] == [e.type for e in whole[cut + 1 :]]


async def test_a_streamed_background_response_is_the_same_stream_as_its_replay() -> None:
    async with openai_client(AGENTS) as client:
        live = await client.responses.create(
            model="words", input="hi", background=True, stream=True
        )
        events = [event async for event in live]
        id = events[0].response.id
        replay = await client.responses.retrieve(id, stream=True)
        again = [event async for event in replay]
    assert [e.model_dump() for e in events] == [e.model_dump() for e in again]


async def test_a_tool_runs_once_and_the_answer_is_stored() -> None:
    calls.clear()
    async with openai_client(AGENTS) as client:
        created = await client.responses.create(model="adder", input="add", background=True)
        done = await _settled(client, created.id)
        assert done.output_text == "the sum is 5"
        follow_up = await client.responses.create(
            model="words", input="and?", previous_response_id=created.id
        )
    assert calls == ["2+3"]
    assert follow_up.status == "completed"


async def test_cancel_stops_the_run() -> None:
    async with openai_client(AGENTS) as client:
        created = await client.responses.create(model="slow", input="hi", background=True)
        await asyncio.sleep(0.2)
        cancelled = await client.responses.cancel(created.id)
        assert cancelled.status == "cancelled"
        again = await client.responses.retrieve(created.id)
        assert again.status == "cancelled"


async def test_background_needs_store_and_a_plain_response_cannot_be_streamed_again() -> None:
    async with openai_client(AGENTS) as client:
        with pytest.raises(openai.BadRequestError, match="store"):
            await client.responses.create(model="words", input="hi", background=True, store=False)
        plain = await client.responses.create(model="words", input="hi")
        with pytest.raises(openai.BadRequestError, match="background"):
            await client.responses.cancel(plain.id)
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve("resp_missing", stream=True)


async def test_another_key_cannot_see_follow_list_or_cancel_a_background_response() -> None:
    from tests.adapters.openai.clients import running
    from tests.principals import bearer, keyed_settings

    async with running(AGENTS, keyed_settings()) as (_, http):
        body = {"model": "slow", "input": "secret plans", "background": True}
        created = await http.post("/v1/responses", json=body, headers=bearer("alice"))
        assert created.status_code == 200, created.text
        id = created.json()["id"]
        for method, path in (
            ("GET", f"/v1/responses/{id}"),
            ("GET", f"/v1/responses/{id}?stream=true"),
            ("POST", f"/v1/responses/{id}/cancel"),
            ("GET", f"/playground/runs/{id}/events"),
        ):
            answer = await http.request(method, path, headers=bearer("bob"))
            assert answer.status_code == 404, (path, answer.text)
            assert "secret" not in answer.text
        listed = await http.get("/playground/runs.json?agent=slow", headers=bearer("bob"))
        assert listed.json() == {"runs": []}
        mine = await http.get("/playground/runs.json?agent=slow", headers=bearer("alice"))
        assert [r["id"] for r in mine.json()["runs"]] == [id]
        stopped = await http.post(f"/v1/responses/{id}/cancel", headers=bearer("alice"))
        assert stopped.json()["status"] == "cancelled"


async def test_a_run_with_state_is_logged_and_replayed_like_any_other() -> None:
    # The log keeps the graph's state snapshots; a replay decodes them and /v1 shows none.
    agents = {"researcher": LangGraphAgent("researcher", researcher())}
    async with openai_client(agents) as client:
        live = await client.responses.create(
            model="researcher", input="tea", background=True, stream=True
        )
        events = [event async for event in live]
        replay = await client.responses.retrieve(events[0].response.id, stream=True)
        again = [event async for event in replay]
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "tea is old; tea is new"
    assert [e.model_dump() for e in events] == [e.model_dump() for e in again]
