"""An answered task is held as references into its context's session, and reads the same."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a.server.context import ServerCallContext
from a2a.types import Artifact, ListTasksRequest, Part, Role, Task, TaskState, TaskStatus
from a2a.types import Message as A2AMessage
from asgi_lifespan import LifespanManager

from agenthost.adapters.a2a.tasks import BoundedTaskStore
from agenthost.adapters.a2a.turns import HeldSession, HeldTurns, hold_turns
from agenthost.adapters.a2a.users import PrincipalUser
from agenthost.agents import ChatAgent, Message, SessionKey, TextPart
from agenthost.agents.models import EchoModel
from agenthost.app.memory import LRUMemoryManager
from agenthost.app.server import create_app
from tests.adapters.a2a.support import V1, a2a_settings, in_process, rpc
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio

AGENTS = {"echo": ChatAgent("echo", EchoModel())}
ALICE = ServerCallContext(user=PrincipalUser("alice"))


def answered(task_id: str, question: str, answer: str, *, parts: int = 1) -> Task:
    """A completed task of one turn, in the shape the executor leaves it."""
    task = Task(
        id=task_id,
        context_id="ctx",
        status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
        history=[
            A2AMessage(
                message_id=f"m-{task_id}",
                context_id="ctx",
                task_id=task_id,
                role=Role.ROLE_USER,
                parts=[Part(text=question)],
            )
        ],
        artifacts=[
            Artifact(
                artifact_id="1ec816ac-2612-41c1-892a-c84cab35f660",
                name="answer",
                parts=[Part(text=answer[: len(answer) // 2]), Part(text=answer[len(answer) // 2 :])]
                if parts == 2
                else [Part(text=answer)],
            )
        ],
    )
    task.status.timestamp.GetCurrentTime()
    return task


async def ended(store: BoundedTaskStore, turns: HeldTurns, memory: Any, task: Task) -> None:
    """What a run does: its turn held by its session, its task saved completed."""
    session = HeldSession(memory, SessionKey("echo", "ctx", "alice"), turns, task.id)
    question = task.history[0].parts[0].text
    answer = "".join(p.text for p in task.artifacts[0].parts)
    user = Message(role="user", parts=[TextPart(text=question)], id=task.history[0].message_id)
    await session.append([user, Message.assistant(answer)])
    await store.save(task, ALICE)


def compacted(store: BoundedTaskStore) -> int:
    return sum(held.context is not None for held in store._held.values())


async def test_an_answered_task_reads_back_equal_and_goes_with_its_session() -> None:
    memory = LRUMemoryManager("a2a", max_sessions=100, ttl=3600)
    store = BoundedTaskStore("echo", max_tasks=100, ttl=3600, memory=memory)
    turns = HeldTurns()
    hold_turns(store, turns)
    first, second = answered("t1", "hello?", "hello there"), answered("t2", "and?", "more words")
    streamed = answered("t3", "stream it", "in two chunks", parts=2)
    for task in (first, second, streamed):
        await ended(store, turns, memory, task)
    assert compacted(store) == 2, "the streamed answer (two parts) is not one turn's text"
    assert await store.get("t1", ALICE) == first
    assert await store.get("t2", ALICE) == second
    assert await store.get("t3", ALICE) == streamed
    bob = ServerCallContext(user=PrincipalUser("bob"))
    assert await store.get("t1", bob) is None, "another principal reached the task"
    listed = await store.list(ListTasksRequest(context_id="ctx", history_length=5), ALICE)
    assert sorted(t.id for t in listed.tasks) == ["t1", "t2", "t3"]
    assert {t.id: t for t in listed.tasks}["t2"] == second
    assert store.bytes == first.ByteSize() + second.ByteSize() + streamed.ByteSize()
    await memory.delete(SessionKey("echo", "ctx", "alice"))
    assert await store.get("t1", ALICE) is None, "the task outlived its turn in the session"
    assert await store.get("t3", ALICE) == streamed, "a task kept whole needs no session"


async def test_a_task_the_session_would_not_rebuild_is_kept_whole() -> None:
    memory = LRUMemoryManager("a2a", max_sessions=100, ttl=3600)
    store = BoundedTaskStore("echo", max_tasks=100, ttl=3600, memory=memory)
    turns = HeldTurns()
    hold_turns(store, turns)
    task = answered("t1", "hello?", "hello there")
    task.history[0].metadata["from"] = "a test"  # not in the session: no rebuild has it
    await ended(store, turns, memory, task)
    assert compacted(store) == 0
    assert await store.get("t1", ALICE) == task


async def test_over_http_tasks_get_and_list_answer_what_send_answered() -> None:
    app = create_app(a2a_settings(), AGENTS)
    async with (
        LifespanManager(app) as manager,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=manager.app), base_url="http://localhost"
        ) as http,
    ):
        context, sent = None, []
        for n in range(3):
            message: dict[str, Any] = {
                "messageId": f"m-{n}",
                "role": "ROLE_USER",
                "parts": [{"text": f"turn {n} of the talk"}],
            }
            if context:
                message["contextId"] = context
            body = rpc("SendMessage", {"message": message})
            task = (await http.post("/a2a/echo", json=body, headers=V1)).json()["result"]["task"]
            context = task["contextId"]
            sent.append(task)
        for task in sent:
            got = await http.post("/a2a/echo", json=rpc("GetTask", {"id": task["id"]}), headers=V1)
            assert got.json()["result"] == task
            short = rpc("GetTask", {"id": task["id"], "historyLength": 0})
            got = (await http.post("/a2a/echo", json=short, headers=V1)).json()["result"]
            assert "history" not in got and got["artifacts"] == task["artifacts"]
            rest = await http.get(f"/a2a/echo/tasks/{task['id']}", headers=V1)
            assert rest.json() == task
        listed = await http.get(
            f"/a2a/echo/tasks?contextId={context}&includeArtifacts=true", headers=V1
        )
        by_id = {t["id"]: t for t in listed.json()["tasks"]}
        assert set(by_id) == {t["id"] for t in sent}
        listed_answer = by_id[sent[1]["id"]]["artifacts"][0]  # REST lists print every field
        assert listed_answer["artifactId"] == sent[1]["artifacts"][0]["artifactId"]
        assert listed_answer["parts"][0]["text"] == "turn 1 of the talk"
        [(_, store)] = [s for s in app.state.adapters["/a2a"].bounded_stores() if s[0] == "tasks"]
        assert compacted(store) == 3, "the answered tasks were kept whole"


async def test_with_sessions_in_redis_an_answered_task_reads_back(
    redis: RedisServer,  # noqa: F811
) -> None:
    settings = a2a_settings(session_store=redis.url)
    message = {"messageId": "m-r", "role": "ROLE_USER", "parts": [{"text": "in redis"}]}
    async with in_process(AGENTS, settings) as http:
        body = rpc("SendMessage", {"message": message})
        task = (await http.post("/a2a/echo", json=body, headers=V1)).json()["result"]["task"]
        got = await http.post("/a2a/echo", json=rpc("GetTask", {"id": task["id"]}), headers=V1)
        assert got.json()["result"] == task
        assert task["artifacts"][0]["parts"] == [{"text": "in redis"}]
