"""Raw A2A requests in-process: errors, 0.3 bodies, cards, discovery, no shadowing."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.build import load_agents
from tests.adapters.a2a.support import V1, a2a_settings, in_process, rpc
from tests.principals import transcript_model

pytestmark = pytest.mark.anyio

V1_JSON = {**V1, "content-type": "application/json"}  # raw bodies, declared JSON as clients do

AGENTS = {
    "echo": ChatAgent("echo", EchoModel(), description="Repeats what you say."),
    "memory": ChatAgent("memory", transcript_model()),
}


def send_params(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": list(parts)}}


async def test_json_rpc_errors_have_their_codes_and_the_server_keeps_serving() -> None:
    async with in_process(AGENTS) as http:
        bad_json = await http.post("/a2a/echo", content=b"{not json", headers=V1_JSON)
        assert bad_json.json()["error"]["code"] == -32700
        unknown = await http.post("/a2a/echo", json=rpc("NoSuchMethod", {}), headers=V1)
        assert unknown.json()["error"]["code"] == -32601
        bad_params = await http.post(
            "/a2a/echo", json=rpc("SendMessage", {"message": 3}), headers=V1
        )
        assert bad_params.json()["error"]["code"] == -32602
        no_task = await http.post("/a2a/echo", json=rpc("GetTask", {"id": "nope"}), headers=V1)
        assert no_task.json()["error"]["code"] == -32001  # TaskNotFoundError
        for answer in (bad_json, unknown, bad_params, no_task):
            assert answer.status_code < 500
        ok = await http.post(
            "/a2a/echo", json=rpc("SendMessage", send_params({"text": "hi"})), headers=V1
        )
        assert ok.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_rest_errors_are_http_statuses() -> None:
    async with in_process(AGENTS) as http:
        missing = await http.get("/a2a/echo/tasks/nope", headers=V1)
        assert missing.status_code == 404
        bad = await http.post("/a2a/echo/message:send", content=b"{oops", headers=V1_JSON)
        assert 400 <= bad.status_code < 500


async def test_a_0_3_message_send_without_a_version_header_gets_a_0_3_answer() -> None:
    body = rpc(
        "message/send",
        {
            "message": {
                "kind": "message",
                "messageId": "m-03",
                "role": "user",
                "parts": [{"kind": "text", "text": "hello from 0.3"}],
            }
        },
    )
    async with in_process(AGENTS) as http:
        answer = await http.post("/a2a/echo/", json=body)
        task = answer.json()["result"]
        assert task["kind"] == "task" and task["status"]["state"] == "completed"
        assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "hello from 0.3"}]
        # 0.3 HTTP+JSON is the 0.3 protobuf as JSON: ``content``, not ``parts``.
        message = {"messageId": "m-rest", "role": "ROLE_USER", "content": [{"text": "rest 0.3"}]}
        rest = await http.post("/a2a/echo/v1/message:send", json={"message": message})
        assert rest.status_code == 200, rest.text
        assert rest.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_data_parts_reach_the_agent_and_files_other_than_images_are_refused() -> None:
    data = send_params({"text": "look:"}, {"data": {"city": "Paris", "days": 3}})
    pdf = send_params({"raw": base64.b64encode(b"%PDF").decode(), "mediaType": "application/pdf"})
    async with in_process(AGENTS) as http:
        seen = await http.post("/a2a/memory", json=rpc("SendMessage", data), headers=V1)
        artifact = seen.json()["result"]["task"]["artifacts"][0]["parts"][0]["text"]
        assert '"city":"Paris"' in artifact and "look:" in artifact
        refused = await http.post("/a2a/echo", json=rpc("SendMessage", pdf), headers=V1)
        error = refused.json()["error"]
        assert error["code"] == -32005 and "application/pdf" in error["message"]


async def test_other_routes_are_never_captured_by_the_a2a_routes() -> None:
    async with in_process(AGENTS) as http:
        models = await http.get("/v1/models")
        assert models.status_code == 200 and {m["id"] for m in models.json()["data"]} == set(AGENTS)
        chat = await http.post(
            "/v1/chat/completions",
            json={"model": "echo", "messages": [{"role": "user", "content": "still me"}]},
        )
        assert chat.json()["choices"][0]["message"]["content"] == "still me"
        assert (await http.get("/healthz")).json() == {"status": "ok"}
        assert (await http.get("/readyz")).status_code == 200
        assert (await http.get("/mcp/anything")).status_code == 404
        assert "/a2a" in (await http.get("/openapi.json")).json()["paths"]


async def test_unknown_agents_get_a_readable_404_everywhere() -> None:
    async with in_process(AGENTS) as http:
        for answer in (
            await http.get("/a2a/nobody/.well-known/agent-card.json"),
            await http.post("/a2a/nobody", json=rpc("SendMessage", {}), headers=V1),
            await http.post("/a2a/nobody/message:send", json={}, headers=V1),
            await http.get("/a2a/nobody/tasks/x", headers=V1),
        ):
            assert answer.status_code == 404
            assert "nobody" in answer.json()["error"]["message"]


async def test_the_index_and_cards_give_urls_a_client_can_use() -> None:
    settings = a2a_settings(a2a_grpc_port=50999, a2a_grpc_public_host="grpc.example.com:443")
    async with in_process(AGENTS, settings) as http:
        index = (await http.get("/a2a")).json()["agents"]
        assert [a["name"] for a in index] == ["echo", "memory"]
        assert index[0]["card"] == "http://localhost/a2a/echo/.well-known/agent-card.json"
        card = (await http.get(index[0]["card"])).json()
        assert card["name"] == "echo" and card["description"] == "Repeats what you say."
        assert card["capabilities"]["streaming"] is True
        assert card["skills"][0]["description"] == "Repeats what you say."
        interfaces = {
            (i["protocolBinding"], i["protocolVersion"]): i for i in card["supportedInterfaces"]
        }
        assert interfaces["JSONRPC", "1.0"]["url"] == "http://localhost/a2a/echo"
        assert interfaces["HTTP+JSON", "1.0"]["url"] == "http://localhost/a2a/echo"
        assert interfaces["GRPC", "1.0"] == {
            "url": "grpc.example.com:443",
            "protocolBinding": "GRPC",
            "protocolVersion": "1.0",
            "tenant": "echo",
        }
        assert card["url"] == "http://localhost/a2a/echo"  # the 0.3 fields, for 0.3 clients
        assert "securitySchemes" not in card  # auth is off
        # No default agent among two: the root card is 404.
        assert (await http.get("/.well-known/agent-card.json")).status_code == 404


async def test_card_urls_follow_the_public_url_or_a_trusted_proxy() -> None:
    headers = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "agents.example.com"}
    card_path = "/a2a/echo/.well-known/agent-card.json"
    async with in_process(AGENTS, a2a_settings(a2a_grpc_port=0)) as http:
        untrusted = (await http.get(card_path, headers=headers)).json()
        assert untrusted["supportedInterfaces"][0]["url"] == "http://localhost/a2a/echo"
        assert not any(i["protocolBinding"] == "GRPC" for i in untrusted["supportedInterfaces"])
    trusted = a2a_settings(a2a_trust_forwarded=True, a2a_default_agent="echo")
    async with in_process(AGENTS, trusted) as http:
        card = (await http.get(card_path, headers={**headers, "X-Forwarded-Prefix": "/ai"})).json()
        assert card["supportedInterfaces"][0]["url"] == "https://agents.example.com/ai/a2a/echo"
        root = (await http.get("/.well-known/agent-card.json")).json()
        assert root["name"] == "echo"
    public = a2a_settings(a2a_public_url="https://public.example.org/", a2a_grpc_port=0)
    async with in_process(AGENTS, public) as http:
        card = (await http.get(card_path, headers=headers)).json()
        assert card["supportedInterfaces"][0]["url"] == "https://public.example.org/a2a/echo"


async def test_cards_can_be_cached_and_revalidated() -> None:
    async with in_process(AGENTS, a2a_settings(a2a_grpc_port=0)) as http:
        first = await http.get("/a2a/echo/.well-known/agent-card.json")
        assert "max-age=" in first.headers["cache-control"] and first.headers["last-modified"]
        etag = first.headers["etag"]
        again = await http.get(
            "/a2a/echo/.well-known/agent-card.json", headers={"If-None-Match": etag}
        )
        assert again.status_code == 304 and again.headers["etag"] == etag
        other = await http.get(
            "/a2a/memory/.well-known/agent-card.json", headers={"If-None-Match": etag}
        )
        assert other.status_code == 200


async def test_a_strict_1_0_card_lists_no_0_3_interface_and_no_0_3_fields() -> None:
    async with in_process(AGENTS, a2a_settings(a2a_card_v03=False)) as http:
        card = (await http.get("/a2a/echo/.well-known/agent-card.json")).json()
    assert {i["protocolVersion"] for i in card["supportedInterfaces"]} == {"1.0"}
    assert not {"url", "preferredTransport", "protocolVersion"} & set(card)


async def test_skills_declared_in_the_config_are_in_the_card(tmp_path: Path) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text(
        "agents:\n"
        "  - name: translator\n"
        "    model: echo\n"
        "    description: Translates text.\n"
        "    skills:\n"
        "      - id: fr-en\n"
        "        name: French to English\n"
        "        description: Translates French text into English.\n"
        "        tags: [translation, french]\n"
        "        examples: [Traduis 'bonjour'.]\n"
        "      - {id: summary, description: Summarises a text.}\n"
        "  - {name: plain, model: echo, description: No skills declared.}\n"
    )
    _, registry = load_agents(config)
    async with in_process(registry) as http:
        card = (await http.get("/a2a/translator/.well-known/agent-card.json")).json()
        assert card["skills"] == [
            {
                "id": "fr-en",
                "name": "French to English",
                "description": "Translates French text into English.",
                "tags": ["translation", "french"],
                "examples": ["Traduis 'bonjour'."],
            },
            {
                "id": "summary",
                "name": "summary",
                "description": "Summarises a text.",
                "tags": ["translator"],  # at least one, as the spec wants
            },
        ]
        plain = (await http.get("/a2a/plain/.well-known/agent-card.json")).json()
        assert [s["description"] for s in plain["skills"]] == ["No skills declared."]


async def test_a_body_that_is_not_utf8_is_a_400_on_every_binding() -> None:
    async with in_process(AGENTS) as http:
        for path in ("/a2a/echo/message:send", "/a2a/echo/message:stream"):
            rest = await http.post(path, content=b"\xff\xfe", headers=V1_JSON)
            assert rest.status_code == 400, rest.text
            assert rest.json()["error"]["status"] == "INVALID_ARGUMENT"
        jsonrpc = await http.post("/a2a/echo", content=b"\xff\xfe", headers=V1_JSON)
        assert jsonrpc.json()["error"]["code"] == -32700
        sent = await http.post(
            "/a2a/echo/message:send", json=send_params({"text": "ok"}), headers=V1
        )
        assert sent.status_code == 200, sent.text
        assert sent.json()["task"]["artifacts"][0]["parts"][0]["text"] == "ok"


MESSAGE = '{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}'


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (
            '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":' + "1" * 4400 + "}}",
            -32700,
        ),
        (
            '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":'
            + "[" * 1000
            + "]" * 1000
            + "}",
            -32700,
        ),
        ('{"jsonrpc":"2.0","id":1,"method":"\xff"}', -32700),
        ('[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]', -32600),
        ('{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{"id":"x"}}', -32600),
        ('{"jsonrpc":"2.0","id":1}', -32600),
        ('{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":3}}', -32602),
        (
            '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
            + MESSAGE
            + ',"x":'
            + "9" * 30
            + "}}",
            None,
        ),
    ],
    ids=[
        "4,400-digit int",
        "1,000 deep",
        "not UTF-8",
        "batch",
        "object id",
        "no method",
        "bad params",
        "big int ok",
    ],
)
async def test_malformed_json_rpc_gets_its_spec_code_and_logs_no_error(
    body: str, code: int | None, caplog: pytest.LogCaptureFixture
) -> None:
    raw = body.encode("latin-1") if "\xff" in body else body.encode()
    async with in_process(AGENTS) as http:
        answer = await http.post(
            "/a2a/echo", content=raw, headers={**V1, "content-type": "application/json"}
        )
    assert answer.status_code == 200
    if code is None:
        assert "result" in answer.json(), answer.text
    else:
        assert answer.json()["error"]["code"] == code, answer.text
    assert not [r for r in caplog.records if r.levelno >= 40 or r.exc_info], caplog.text


async def test_the_apps_refusals_take_the_shape_of_the_binding_asked() -> None:
    async with in_process(AGENTS) as http:
        plain = {**V1, "content-type": "text/plain"}
        for url in ("/a2a/echo", "/a2a/echo/"):
            jsonrpc = await http.post(url, content=b"{}", headers=plain)
            assert jsonrpc.status_code == 415
            assert jsonrpc.json()["jsonrpc"] == "2.0", jsonrpc.text
            assert jsonrpc.json()["error"]["code"] == -32600
            assert int(jsonrpc.headers["content-length"]) == len(jsonrpc.content)
        rest = await http.post("/a2a/echo/message:send", content=b"{}", headers=plain)
        assert rest.status_code == 415
        assert rest.json()["error"]["status"] == "UNSUPPORTED_MEDIA_TYPE", rest.text


def sse_error(answer: Any) -> Any:
    """The JSON-RPC error a streamed (SSE) or plain answer carries."""
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
        assert len(data) == 1, answer.text
        return json.loads(data[0])["error"]
    return answer.json()["error"]


async def test_subscribing_to_an_unknown_or_finished_task_is_a_4xx_in_0_3_and_1_0() -> None:
    async with in_process(AGENTS) as http:
        sent = await http.post(
            "/a2a/echo", json=rpc("SendMessage", send_params({"text": "hi"})), headers=V1
        )
        done = sent.json()["result"]["task"]["id"]
        for task, code, status in (("nope", -32001, 404), (done, -32004, 400)):
            # JSON-RPC: the error in the answer (0.3: its one event), with its code.
            v03 = await http.post("/a2a/echo", json=rpc("tasks/resubscribe", {"id": task}))
            v10 = await http.post(
                "/a2a/echo", json=rpc("SubscribeToTask", {"id": task}), headers=V1
            )
            for answer in (v03, v10):
                assert answer.status_code == 200 and sse_error(answer)["code"] == code
            # HTTP+JSON: the error's status and body, 0.3 (under /v1) and 1.0, GET and POST.
            for path, headers in (
                (f"/v1/tasks/{task}:subscribe", {}),
                (f"/tasks/{task}:subscribe", V1),
            ):
                for method in ("GET", "POST"):
                    answer = await http.request(method, "/a2a/echo" + path, headers=headers)
                    assert answer.status_code == status, (path, method, answer.text)
                    assert answer.json()["error"]["code"] == status
        missing = await http.get("/a2a/echo/v1/tasks/nope:subscribe")
        assert missing.json()["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
