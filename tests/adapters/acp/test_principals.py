"""Principals on /acp: runs and sessions belong to the API key that made them."""

import httpx
import pytest
from acp_sdk.client import Client
from acp_sdk.models import ACPError, Message, MessageAwaitResume, MessagePart

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from tests.adapters.acp.clients import acp_client, acp_settings
from tests.principals import KEYS, bearer, check_isolation, transcript_model
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio


def keyed(**overrides: object) -> object:
    return acp_settings(api_keys=[f"{n}:{k}" for n, k in KEYS.items()], **overrides)


class SessionProbe:
    """An ACP session, referenced by its id; reading = GET /sessions/{id} and its history."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    def _client(self, principal: str) -> Client:
        # acp-sdk takes headers only for an HTTP client it makes itself.
        transport = self.http._transport
        return Client(transport=transport, base_url=self.http.base_url, headers=bearer(principal))

    async def create(self, principal: str, text: str) -> str:
        async with self._client(principal) as client:
            run = await client.session().run_sync(text, agent="t")
        assert run.status == "completed"
        return str(run.session_id)

    async def read(self, principal: str, ref: str) -> str | None:
        answer = await self.http.get(f"/sessions/{ref}", headers=bearer(principal))
        if answer.status_code == 404:
            assert answer.json()["code"] == "not_found"
            return None
        urls = answer.json()["history"]
        texts = [(await self.http.get(url, headers=bearer(principal))).text for url in urls]
        return " ".join(texts)

    async def resume(self, principal: str, ref: str, text: str) -> str:
        body = {"agent_name": "t", "session_id": ref, "input": [{"parts": [{"content": text}]}]}
        answer = await self.http.post("/runs", json=body, headers=bearer(principal))
        assert answer.status_code == 200, answer.text
        return str(answer.json()["output"][0]["parts"][0]["content"])

    async def delete(self, principal: str, ref: str) -> bool:
        return False  # ACP has no way to delete a session

    async def list(self, principal: str) -> list[str]:
        return []  # ... nor to list them


class RunProbe(SessionProbe):
    """An ACP run, referenced by its id: read, events, resume and cancel."""

    async def create(self, principal: str, text: str) -> str:
        body = {"agent_name": "t", "input": [{"parts": [{"content": text}]}]}
        answer = await self.http.post("/runs", json=body, headers=bearer(principal))
        assert answer.status_code == 200, answer.text
        return str(answer.json()["run_id"])

    async def read(self, principal: str, ref: str) -> str | None:
        answer = await self.http.get(f"/runs/{ref}", headers=bearer(principal))
        events = await self.http.get(f"/runs/{ref}/events", headers=bearer(principal))
        if answer.status_code == 404:
            assert events.status_code == 404 and answer.json()["code"] == "not_found"
            return None
        return answer.text + events.text

    async def resume(self, principal: str, ref: str, text: str) -> str:
        resume = MessageAwaitResume(message=Message(parts=[MessagePart(content=text)]))
        async with self._client(principal) as client:
            with pytest.raises(ACPError) as refused:
                await client.run_resume_sync(resume, run_id=ref)  # type: ignore[arg-type]
        # Alice's run does not exist for Bob; for Alice it awaits nothing.
        if refused.value.error.code == "not_found":
            return ""
        assert refused.value.error.code == "invalid_input"
        return await self.read(principal, ref) or ""

    async def delete(self, principal: str, ref: str) -> bool:
        answer = await self.http.post(f"/runs/{ref}/cancel", headers=bearer(principal))
        return answer.status_code == 202


@pytest.mark.parametrize("probe", [SessionProbe, RunProbe])
async def test_runs_and_sessions_belong_to_the_key_that_made_them(
    probe: type[SessionProbe],
) -> None:
    agents = {"t": ChatAgent("t", transcript_model())}
    async with acp_client(agents, keyed()) as client:  # type: ignore[arg-type]
        await check_isolation(probe(client.client))


@pytest.mark.parametrize("probe", [SessionProbe, RunProbe])
async def test_on_redis_runs_and_sessions_stay_with_their_key_and_tenant(
    probe: type[SessionProbe],
    redis: RedisServer,  # noqa: F811
) -> None:
    agents = {"t": ChatAgent("t", transcript_model())}
    async with acp_client(agents, keyed(session_store=redis.url)) as client:  # type: ignore[arg-type]
        await check_isolation(probe(client.client))


async def test_without_a_key_the_answer_is_401_in_acps_shape() -> None:
    agents = {"t": ChatAgent("t", EchoModel())}
    async with acp_client(agents, keyed()) as client:  # type: ignore[arg-type]
        with pytest.raises(ACPError) as refused:
            _ = [agent async for agent in client.agents()]
        assert refused.value.error.message
        answer = await client.client.get("/agents")
        assert answer.status_code == 401 and set(answer.json()) == {"code", "message", "data"}
        assert (await client.client.get("/agents", headers=bearer("bob"))).status_code == 200


async def test_an_agent_limited_to_a_principal_is_unknown_to_others() -> None:
    from asgi_lifespan import LifespanManager

    from agenthost.app.server import create_app

    agents = {"t": ChatAgent("t", EchoModel()), "private": ChatAgent("private", EchoModel())}
    app = create_app(keyed(), agents, allow={"private": frozenset({"alice"})})  # type: ignore[arg-type]
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        bob = Client(transport=transport, base_url="http://localhost/acp", headers=bearer("bob"))
        alice = Client(
            transport=transport, base_url="http://localhost/acp", headers=bearer("alice")
        )
        async with bob, alice:
            assert [a.name async for a in bob.agents()] == ["t"]
            for attempt in (bob.agent(name="private"), bob.run_sync("hi", agent="private")):
                with pytest.raises(ACPError) as missing:
                    await attempt
                assert missing.value.error.code == "not_found"
            assert [a.name async for a in alice.agents()] == ["t", "private"]
            run = await alice.run_sync("hi", agent="private")
            assert str(run.output[0]) == "hi"
