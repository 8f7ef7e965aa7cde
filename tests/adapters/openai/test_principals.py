"""Principals on /v1: stored responses, their items and conversations belong to one API key."""

import re

import httpx
import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.adapters.openai.clients import running
from tests.principals import KEYS, bearer, check_isolation, keyed_settings, transcript_model
from tests.stores import RedisServer, redis  # noqa: F401 (a fixture)

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


async def test_on_redis_responses_and_conversations_stay_with_their_key_and_tenant(
    redis: RedisServer,  # noqa: F811
) -> None:
    agents = {"t": ChatAgent("t", transcript_model())}
    async with running(agents, keyed_settings(session_store=redis.url)) as (_, client):
        await check_isolation(ResponsesProbe(client))
        await check_isolation(ConversationProbe(client))


async def test_an_agent_limited_to_a_principal_is_unknown_to_others() -> None:
    agents = {"t": ChatAgent("t", EchoModel()), "private": ChatAgent("private", EchoModel())}
    app = create_app(keyed_settings(), agents, allow={"private": frozenset({"alice"})})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
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
    keys.write_text(
        "# team keys\ncarol:key-c-0123456789ab\n\n dave:key-d-0123456789ab  # on call\n"
    )
    settings = Settings(
        api_keys=["alice:key-a-0123456789ab", "bare-key-0123456789"], api_keys_file=keys
    )
    principals = settings.principals()
    assert principals["key-a-0123456789ab"] == "alice"
    assert principals["key-c-0123456789ab"] == "carol"
    assert principals["key-d-0123456789ab"] == "dave"
    bare = principals["bare-key-0123456789"]
    assert bare.startswith("key-") and "bare" not in bare
    empty = Path(str(tmp_path)) / "empty"
    empty.write_text("# nothing\n")
    from agenthost.app.principals import KeysError

    with pytest.raises(KeysError, match="holds no key"):
        Settings(api_keys_file=empty).principals()


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("alice:", "entry 1 (named 'alice'): the key after ':' is empty"),
        (":", "entry 1: the key after ':' is empty"),
        (":0123456789abcdefgh", "entry 1: the name before ':' is empty"),
        ("alice:0123456789abcdef,bob:tiny", "entry 2 (named 'bob'): the key is shorter than 16"),
        ("a-bare-short-key", None),
        ("short-bare-key", "entry 1: the key is shorter than 16 characters"),
    ],
)
def test_empty_and_short_keys_stop_start_up_naming_the_entry_not_the_key(
    value: str, error: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agenthost.app.principals import KeysError

    monkeypatch.setenv("AGENTHOST_API_KEYS", value)
    if error is None:
        assert len(Settings().principals()) == 1
        return
    with pytest.raises(KeysError, match=re.escape(error)) as caught:
        Settings().principals()
    assert "tiny" not in str(caught.value) and "0123456789" not in str(caught.value)


def test_the_keys_file_follows_the_same_rules_naming_the_line(tmp_path: object) -> None:
    from pathlib import Path

    from agenthost.app.principals import KeysError

    keys = Path(str(tmp_path)) / "keys"
    keys.write_text("# team\ncarol:key-c-0123456789ab\nalice:\n")
    with pytest.raises(KeysError, match=f"{re.escape(str(keys))} line 3 \\(named 'alice'\\)"):
        Settings(api_keys_file=keys).principals()


def test_a_whitespace_only_setting_is_a_start_up_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    monkeypatch.setenv("AGENTHOST_API_KEYS", "   ")
    with pytest.raises(ValidationError, match="lists nothing"):
        Settings()


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
    assert f"auth on: {len(KEYS)} API keys" in messages
    assert "auth off: every caller is the anonymous principal" in messages
    assert not any("key-of-" in message for message in messages)
