"""Principals on /v1: stored responses, their items and conversations belong to one API key."""

import httpx
import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.openai.clients import running
from tests.principals import bearer, check_isolation, keyed_settings, transcript_model

pytestmark = pytest.mark.anyio


class ResponsesProbe:
    """Stored responses, referenced by response id."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def create(self, principal: str, text: str) -> str:
        body = {"model": "t", "input": text}
        answer = await self.client.post("/v1/responses", json=body, headers=bearer(principal))
        assert answer.status_code == 200, answer.text
        return str(answer.json()["id"])

    async def read(self, principal: str, ref: str) -> str | None:
        answer = await self.client.get(f"/v1/responses/{ref}", headers=bearer(principal))
        if answer.status_code == 404:
            return None
        assert answer.status_code == 200, answer.text
        return answer.text

    async def resume(self, principal: str, ref: str, text: str) -> str:
        body = {"model": "t", "input": text, "previous_response_id": ref}
        answer = await self.client.post("/v1/responses", json=body, headers=bearer(principal))
        if answer.status_code == 400:
            assert answer.json()["error"]["code"] == "previous_response_not_found"
            return ""
        assert answer.status_code == 200, answer.text
        return answer.text

    async def delete(self, principal: str, ref: str) -> bool:
        answer = await self.client.delete(f"/v1/responses/{ref}", headers=bearer(principal))
        return answer.status_code == 200

    async def list(self, principal: str) -> list[str]:
        return []  # the Responses API has no listing


class InputItemsProbe(ResponsesProbe):
    """A stored response's input items (``GET /v1/responses/{id}/input_items``)."""

    async def read(self, principal: str, ref: str) -> str | None:
        url = f"/v1/responses/{ref}/input_items"
        answer = await self.client.get(url, headers=bearer(principal))
        if answer.status_code == 404:
            return None
        assert answer.status_code == 200, answer.text
        return answer.text


class ConversationProbe:
    """A conversation of the Conversations API, continued with ``conversation``."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client

    async def create(self, principal: str, text: str) -> str:
        items = [{"role": "user", "content": text}]
        made = await self.client.post(
            "/v1/conversations", json={"items": items}, headers=bearer(principal)
        )
        assert made.status_code == 200, made.text
        return str(made.json()["id"])

    async def read(self, principal: str, ref: str) -> str | None:
        headers = bearer(principal)
        one = await self.client.get(f"/v1/conversations/{ref}", headers=headers)
        items = await self.client.get(f"/v1/conversations/{ref}/items", headers=headers)
        if one.status_code == 404:
            assert items.status_code == 404, "the items of a hidden conversation were shown"
            return None
        assert one.status_code == items.status_code == 200, items.text
        return items.text

    async def resume(self, principal: str, ref: str, text: str) -> str:
        body = {"model": "t", "input": text, "conversation": ref}
        answer = await self.client.post("/v1/responses", json=body, headers=bearer(principal))
        if answer.status_code == 404:
            assert answer.json()["error"]["code"] == "conversation_not_found"
            return ""
        assert answer.status_code == 200, answer.text
        return str(answer.json()["output"][0]["content"][0]["text"])

    async def delete(self, principal: str, ref: str) -> bool:
        url = f"/v1/conversations/{ref}"
        answer = await self.client.delete(url, headers=bearer(principal))
        return answer.status_code == 200

    async def list(self, principal: str) -> list[str]:
        return []  # the Conversations API has no listing


async def test_stored_responses_belong_to_the_key_that_made_them() -> None:
    agents = {"t": ChatAgent("t", transcript_model())}
    async with running(agents, keyed_settings()) as (_, client):
        await check_isolation(ResponsesProbe(client))


async def test_input_items_belong_to_the_key_that_made_them() -> None:
    agents = {"t": ChatAgent("t", transcript_model())}
    async with running(agents, keyed_settings()) as (_, client):
        await check_isolation(InputItemsProbe(client))


async def test_conversations_belong_to_the_key_that_made_them() -> None:
    agents = {"t": ChatAgent("t", transcript_model())}
    async with running(agents, keyed_settings()) as (_, client):
        await check_isolation(ConversationProbe(client))


async def test_an_agent_limited_to_a_principal_is_unknown_to_others() -> None:
    agents = {"t": ChatAgent("t", EchoModel()), "private": ChatAgent("private", EchoModel())}
    app = create_app(keyed_settings(), agents, allow={"private": frozenset({"alice"})})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        listed = await client.get("/v1/models", headers=bearer("bob"))
        assert [m["id"] for m in listed.json()["data"]] == ["t"]
        body = {"model": "private", "messages": [{"role": "user", "content": "hi"}]}
        refused = await client.post("/v1/chat/completions", json=body, headers=bearer("bob"))
        assert refused.status_code == 404
        assert refused.json()["error"]["code"] == "model_not_found"
        one = await client.get("/v1/models/private", headers=bearer("bob"))
        assert one.status_code == 404
        served = await client.post("/v1/chat/completions", json=body, headers=bearer("alice"))
        assert served.status_code == 200
        assert served.json()["choices"][0]["message"]["content"] == "hi"


def test_an_allow_list_must_name_a_key() -> None:
    from agenthost.app.principals import KeysError

    agents = {"t": ChatAgent("t", EchoModel())}
    with pytest.raises(KeysError, match="unknown principal 'carol'; API keys are named alice, bob"):
        create_app(keyed_settings(), agents, allow={"t": frozenset({"carol"})})


@pytest.mark.parametrize("value", [" , ", ",", " ,, "])
def test_keys_that_parse_to_nothing_are_a_start_up_error(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic import ValidationError

    monkeypatch.setenv("AGENTHOST_API_KEYS", value)
    with pytest.raises(ValidationError, match="lists nothing"):
        Settings()


def test_named_bare_and_file_keys_give_principals(tmp_path: object) -> None:
    from pathlib import Path

    keys = Path(str(tmp_path)) / "keys"
    keys.write_text("# team keys\ncarol:key-c\n\n dave:key-d  # on call\n")
    settings = Settings(api_keys=["alice:key-a", "bare-key"], api_keys_file=keys)
    principals = settings.principals()
    assert principals["key-a"] == "alice"
    assert principals["key-c"] == "carol" and principals["key-d"] == "dave"
    assert principals["bare-key"].startswith("key-") and "bare" not in principals["bare-key"]
    empty = Path(str(tmp_path)) / "empty"
    empty.write_text("# nothing\n")
    from agenthost.app.principals import KeysError

    with pytest.raises(KeysError, match="holds no key"):
        Settings(api_keys_file=empty).principals()


async def test_the_start_up_log_says_whether_auth_is_on_never_the_keys(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agents = {"t": ChatAgent("t", EchoModel())}
    with caplog.at_level("INFO", logger="agenthost"):
        async with running(agents, keyed_settings()):
            pass
        async with running(agents, Settings()):
            pass
    messages = [record.getMessage() for record in caplog.records]
    assert "auth on: 2 API keys" in messages
    assert "auth off: every caller is the anonymous principal" in messages
    assert not any("key-of-" in message for message in messages)
