"""Principals and agents on A2A: one key's tasks and contexts are out of another's reach."""

from __future__ import annotations

from typing import Any

import grpc
import httpx
import pytest
from a2a.types import GetTaskRequest, TaskState
from a2a.utils.errors import TaskNotFoundError

from agenthost.agents import ChatAgent
from tests.adapters.a2a.support import (
    V1,
    a2a_settings,
    artifact_text,
    collect,
    final_task,
    in_process,
    rpc,
    sdk_client,
    user_message,
)
from tests.principals import (
    KEYS,
    PAIRS,
    bearer,
    check_isolation,
    keyed_settings,
    transcript_model,
)
from tests.stores import postgres_url  # noqa: F401 (a fixture)
from tests.upstream import free_port

pytestmark = pytest.mark.anyio

AGENTS = {
    "memory": ChatAgent("memory", transcript_model()),
    "twin": ChatAgent("twin", transcript_model()),
}


class TaskProbe:
    """Tasks and contexts over JSON-RPC; a reference is ``task id:context id``."""

    def __init__(self, http: httpx.AsyncClient, agent: str = "memory") -> None:
        self.http, self.url = http, f"/a2a/{agent}"

    async def call(self, principal: str, method: str, params: dict[str, Any]) -> Any:
        answer = await self.http.post(
            self.url, json=rpc(method, params), headers={**V1, **bearer(principal)}
        )
        assert answer.status_code == 200, answer.text
        return answer.json()

    async def create(self, principal: str, text: str) -> str:
        message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}
        task = (await self.call(principal, "SendMessage", {"message": message}))["result"]["task"]
        return f"{task['id']}:{task['contextId']}"

    async def read(self, principal: str, ref: str) -> str | None:
        answer = await self.call(principal, "GetTask", {"id": ref.split(":")[0]})
        return None if "error" in answer else str(answer["result"])

    async def resume(self, principal: str, ref: str, text: str) -> str:
        context_id = ref.split(":")[1]
        message = {
            "messageId": "m-2",
            "role": "ROLE_USER",
            "contextId": context_id,
            "parts": [{"text": text}],
        }
        answer = await self.call(principal, "SendMessage", {"message": message})
        return str(answer["result"]["task"]["artifacts"])

    async def delete(self, principal: str, ref: str) -> bool:
        # A2A deletes nothing; cancelling is the one way to touch another's task.
        answer = await self.call(principal, "CancelTask", {"id": ref.split(":")[0]})
        return "result" in answer

    async def list(self, principal: str) -> list[str]:
        answer = await self.call(principal, "ListTasks", {})
        return [f"{t['id']}:{t['contextId']}" for t in answer["result"]["tasks"]]


def keyed(**overrides: object) -> Any:
    return keyed_settings(adapters=["openai", "a2a"], a2a_push_private_networks=True, **overrides)


async def test_one_key_never_reaches_anothers_tasks_or_contexts() -> None:
    async with in_process(AGENTS, keyed(a2a_grpc_port=0)) as http:
        await check_isolation(TaskProbe(http))


@pytest.mark.slow
async def test_on_postgresql_tasks_stay_with_their_key_and_tenant(
    postgres_url: str,  # noqa: F811
) -> None:
    async with in_process(AGENTS, keyed(a2a_grpc_port=0, a2a_task_store=postgres_url)) as http:
        await check_isolation(TaskProbe(http))


async def test_two_agents_never_see_each_others_tasks_or_contexts() -> None:
    async with in_process(AGENTS, a2a_settings(a2a_grpc_port=0)) as http:
        memory, twin = TaskProbe(http, "memory"), TaskProbe(http, "twin")
        ref = await memory.create("alice", "the secret of memory")
        assert await twin.read("alice", ref) is None
        assert await twin.list("alice") == []
        assert "the secret of memory" not in await twin.resume("alice", ref, "what did I say?")
        assert "the secret of memory" in await memory.resume("alice", ref, "and you?")


async def test_with_keys_on_http_needs_a_key_but_cards_stay_public_and_declare_it() -> None:
    async with in_process(AGENTS, keyed(a2a_grpc_port=0)) as http:
        refused = await http.post("/a2a/memory", json=rpc("GetTask", {"id": "x"}), headers=V1)
        # At the JSON-RPC endpoint, a JSON-RPC error (-32600, the reason in its data).
        error = refused.json()["error"]
        assert refused.status_code == 401 and error["code"] == -32600, refused.text
        assert error["data"]["code"] == "invalid_api_key"
        rest = await http.post("/a2a/memory/message:send", json={"message": {}}, headers=V1)
        assert rest.status_code == 401 and rest.json()["error"]["code"] == 401
        assert (await http.get("/a2a")).status_code == 401
        card = await http.get("/a2a/memory/.well-known/agent-card.json")
        assert card.status_code == 200
        assert card.json()["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == (
            "Bearer"
        )
        assert card.json()["securityRequirements"] == [{"schemes": {"bearer": {}}}]
        client = await sdk_client(
            "http://localhost/a2a/memory", "JSONRPC", http=http, streaming=False, key=KEYS["alice"]
        )
        async with client:
            task = final_task(await collect(client, user_message("hello with a key")))
        assert artifact_text(task) == "hello with a key"


async def test_with_keys_on_grpc_needs_a_key_and_keeps_principals_apart() -> None:
    port = free_port()
    settings = keyed(a2a_grpc_port=port, a2a_grpc_public_host=f"127.0.0.1:{port}")
    async with in_process(AGENTS, settings) as http:
        url = "http://localhost/a2a/memory"
        for owner, other in PAIRS:  # two keys; one name in two tenants
            async with await sdk_client(
                url, "GRPC", http=http, key=KEYS[owner], streaming=False
            ) as alice:
                task = final_task(await collect(alice, user_message("alice over grpc")))
                assert task.status.state == TaskState.TASK_STATE_COMPLETED
                assert (await alice.get_task(GetTaskRequest(id=task.id))).id == task.id
            async with await sdk_client(url, "GRPC", http=http, key=KEYS[other]) as bob:
                with pytest.raises(TaskNotFoundError):
                    await bob.get_task(GetTaskRequest(id=task.id))
        async with await sdk_client(url, "GRPC", http=http) as nobody:
            with pytest.raises(Exception, match="API key") as caught:
                await nobody.get_task(GetTaskRequest(id=task.id))
            cause = caught.value.__cause__
            assert isinstance(cause, grpc.aio.AioRpcError)
            assert cause.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_an_agent_allowed_to_others_is_unknown_to_you_everywhere() -> None:
    port = free_port()
    settings = keyed(a2a_grpc_port=port, a2a_grpc_public_host=f"127.0.0.1:{port}")
    allow = {"twin": frozenset({"alice"})}
    async with in_process(AGENTS, settings, allow=allow) as http:
        card = "/a2a/twin/.well-known/agent-card.json"
        assert (await http.get(card, headers=bearer("alice"))).status_code == 200
        assert (await http.get(card, headers=bearer("bob"))).status_code == 404
        assert (await http.get(card)).status_code == 404  # no key: anonymous
        sent = await http.post(
            "/a2a/twin", json=rpc("GetTask", {"id": "x"}), headers={**V1, **bearer("bob")}
        )
        assert sent.status_code == 404
        index = await http.get("/a2a", headers=bearer("bob"))
        assert [a["name"] for a in index.json()["agents"]] == ["memory"]
        # The SDK fetches cards without the key: start from a public card, pick the tenant.
        client = await sdk_client(
            "http://localhost/a2a/memory", "GRPC", http=http, key=KEYS["alice"], streaming=False
        )
        async with client:
            client._transport._tenant = "twin"  # type: ignore[attr-defined]
            assert final_task(await collect(client, user_message("hi"))).id
        bob = await sdk_client(
            "http://localhost/a2a/memory", "GRPC", http=http, key=KEYS["bob"], streaming=False
        )
        async with bob:
            bob._transport._tenant = "twin"  # type: ignore[attr-defined]
            with pytest.raises(Exception, match="twin"):
                await collect(bob, user_message("hi"))
