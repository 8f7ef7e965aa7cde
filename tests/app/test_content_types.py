"""Content types and Host names, the same on every surface (issue 34, "CSRF closed").

A state-changing request must declare a JSON body (415 in the protocol's own
error shape otherwise, whatever its Origin, and no agent runs); the routes
that read no body, and the acp-sdk client (its JSON goes untyped) when no
browser sent it, need no type. Host names match case-insensitively, and
/mcp accepts exactly the hosts the other surfaces accept. The same refusal
from a page in a real browser: tests/app/test_cross_site_browser.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest
from a2a.types import CancelTaskRequest, SubscribeToTaskRequest
from acp_sdk.client import Client as ACPClient

from agenthost.agents import ChatAgent
from agenthost.agents.models import FunctionModel, ModelRequest
from agenthost.app.settings import Settings
from tests.adapters.a2a.support import collect, final_task, sdk_client, user_message
from tests.conftest import running

pytestmark = pytest.mark.anyio

EVERY = ["openai", "a2a", "mcp", "acp"]
A2A_MESSAGE = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
CHAT = {"model": "counter", "messages": [{"role": "user", "content": "hi"}]}
JSONRPC_SEND = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": A2A_MESSAGE}
MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "counter", "arguments": {"message": "hi"}},
}
# 0.3 HTTP+JSON is the 0.3 protobuf as JSON (``content``), sent with no version header.
A2A_03_MESSAGE = {"message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "hi"}]}}
ACP_RUN = {"agent_name": "counter", "input": [{"parts": [{"content": "hi"}]}]}
HEADERS = {"accept": "application/json, text/event-stream", "A2A-Version": "1.0"}


def headers_for(path: str) -> dict[str, str]:
    """What a client of the path's protocol sends (an A2A 0.3 client: no version)."""
    return {"accept": HEADERS["accept"]} if "/a2a/counter/v1/" in path else dict(HEADERS)


def openai_error(body: Any) -> bool:
    error = body["error"]
    return set(error) == {"message", "type", "param", "code"} and error["code"] == (
        "unsupported_media_type"
    )


def jsonrpc_error(body: Any) -> bool:
    return (
        body["jsonrpc"] == "2.0"
        and body["id"] is None
        and body["error"]["code"] == -32600
        and "Content-Type" in body["error"]["message"]
    )


def a2a_rest_error(body: Any) -> bool:
    return body["error"]["code"] == 415 and body["error"]["status"] == "UNSUPPORTED_MEDIA_TYPE"


def acp_error(body: Any) -> bool:
    return body["code"] == "unsupported_media_type" and "Content-Type" in body["message"]


# Every POST that runs an agent: its body, and the shape its 415 must have.
RUNS: dict[str, tuple[dict[str, Any], Callable[[Any], bool]]] = {
    "/v1/chat/completions": (CHAT, openai_error),
    "/v1/responses": ({"model": "counter", "input": "hi"}, openai_error),
    "/a2a/counter": (JSONRPC_SEND, jsonrpc_error),
    "/a2a/counter/": (JSONRPC_SEND, jsonrpc_error),
    "/a2a/counter/message:send": (A2A_MESSAGE, a2a_rest_error),
    "/a2a/counter/message:stream": (A2A_MESSAGE, a2a_rest_error),
    "/a2a/counter/v1/message:send": (A2A_03_MESSAGE, a2a_rest_error),
    "/mcp": (MCP_CALL, jsonrpc_error),
    "/acp/runs": (ACP_RUN, acp_error),
}
NOT_JSON = [
    None,
    "",
    "text/plain",
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "text/x+json",
]


class Counter:
    """The agent's model: counts the runs that reached it."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self, request: ModelRequest) -> str:
        self.runs += 1
        return "ran"


def counting() -> tuple[Counter, dict[str, ChatAgent]]:
    counter = Counter()
    return counter, {"counter": ChatAgent("counter", FunctionModel(counter), description="Counts.")}


def settings(**overrides: Any) -> Settings:
    return Settings(adapters=EVERY, **overrides)


async def test_a_body_not_declared_json_is_a_415_in_each_protocols_shape_and_runs_nothing() -> None:
    counter, agents = counting()
    async with running(agents, settings()) as (_, http):
        for path, (body, shaped) in RUNS.items():
            # The browser's no-cors fetch of a Blob: an allowed (loopback) Origin, no type.
            browser = {"origin": "http://localhost:5173", "sec-fetch-mode": "no-cors"}
            for content_type in NOT_JSON:
                typed = {} if content_type is None else {"content-type": content_type}
                for origin in ({}, browser):
                    headers = {**headers_for(path), **typed, **origin}
                    if path.startswith("/acp") and not content_type and not origin:
                        continue  # the acp-sdk client's own request: below
                    raw = orjson.dumps(body)  # httpx's json= would declare it
                    answer = await http.post(path, content=raw, headers=headers)
                    assert answer.status_code == 415, (path, content_type, answer.text)
                    assert answer.headers["content-type"] == "application/json"
                    assert shaped(answer.json()), (path, content_type, answer.text)
        assert counter.runs == 0
        # Declared JSON, with parameters: every one runs (so the refusals above can fail).
        for path, (body, _) in RUNS.items():
            declared = {**headers_for(path), "content-type": "application/json; charset=utf-8"}
            answer = await http.post(path, json=body, headers=declared)
            assert answer.status_code == 200, (path, answer.text)
        assert counter.runs == len(RUNS)


async def test_each_protocols_json_types_are_accepted_and_mcp_takes_only_application_json() -> None:
    counter, agents = counting()
    async with running(agents, settings()) as (_, http):
        a2a_json = {**HEADERS, "content-type": "application/a2a+json"}
        for path in ("/a2a/counter", "/a2a/counter/message:send"):
            answer = await http.post(path, json=RUNS[path][0], headers=a2a_json)
            assert answer.status_code == 200, (path, answer.text)
        vendor = {**HEADERS, "content-type": "application/vnd.example+json"}
        answer = await http.post("/v1/chat/completions", json=CHAT, headers=vendor)
        assert answer.status_code == 200, answer.text
        # The MCP SDK's transport takes application/json only (it answered others with a
        # plain-text 400): the app refuses them first, as MCP errors.
        refused = await http.post("/mcp", json=MCP_CALL, headers=vendor)
        assert refused.status_code == 415 and jsonrpc_error(refused.json()), refused.text
        assert counter.runs == 3


async def test_routes_that_read_no_body_need_no_type_but_refuse_a_wrong_one() -> None:
    _, agents = counting()
    async with running(agents, settings()) as (_, http):
        unknown = "0b4c9b2e-1111-4111-8111-111111111111"
        bodyless = [
            f"/acp/runs/{unknown}/cancel",
            "/a2a/counter/tasks/nope:cancel",
            "/a2a/counter/tasks/nope:subscribe",
            "/a2a/counter/v1/tasks/nope:cancel",  # (0.3's subscribe of an unknown task: a 500)
        ]
        browser = {"origin": "http://localhost:5173", "sec-fetch-mode": "no-cors"}
        for path in bodyless:
            for headers in (headers_for(path), {**headers_for(path), **browser}):
                answer = await http.post(path, headers=headers)
                assert answer.status_code == 404, (path, answer.text)
            plain = {**headers_for(path), "content-type": "text/plain"}
            answer = await http.post(path, content=b"{}", headers=plain)
            assert answer.status_code == 415, (path, answer.text)
        for path in ("/v1/responses/nope", "/v1/conversations/nope"):
            assert (await http.delete(path)).status_code == 404
            wrong = await http.delete(path, headers={"content-type": "text/plain"})
            assert wrong.status_code == 415 and openai_error(wrong.json()), wrong.text
        # Not a bodyless route: a POST that would run an agent needs its type.
        lookalike = await http.post("/a2a/counter/message:send:cancel", headers=HEADERS)
        assert lookalike.status_code == 415
        # A method no route takes is a 405 and a path none serves a 404, typed or not (no
        # browser sends a PUT cross-site unasked).
        assert (await http.post("/v1/models", headers=HEADERS)).status_code == 405
        assert (await http.post("/v1/nowhere", headers=HEADERS)).status_code == 404
        assert (await http.put("/v1/models", headers=HEADERS)).status_code == 405
        assert (await http.patch("/v1/chat/completions", headers=HEADERS)).status_code == 405
        wrong = await http.put("/v1/chat/completions", headers={"content-type": "text/plain"})
        assert wrong.status_code == 415


async def test_the_official_clients_bodyless_and_untyped_requests_pass() -> None:
    counter, agents = counting()
    sent: list[tuple[str, str, str | None, int]] = []

    async def record(response: httpx.Response) -> None:
        request = response.request
        typed = request.headers.get("content-type")
        sent.append((request.method, request.url.path, typed, response.status_code))

    async with running(agents, settings()) as (app, _):
        transport = httpx.ASGITransport(app=app)
        hooks = {"response": [record]}
        # acp-sdk: its runs' JSON goes untyped, its cancel bodyless.
        async with ACPClient(
            transport=transport, base_url="http://localhost/acp", event_hooks=hooks
        ) as acp:
            run = await acp.run_sync("hi", agent="counter")
            assert run.status == "completed"
            with pytest.raises(Exception, match="already completed"):
                await acp.run_cancel(run_id=run.run_id)  # a finished run: 409, not 415
        # a2a-sdk over HTTP+JSON: subscribe is a bodyless POST.
        async with httpx.AsyncClient(
            transport=transport, base_url="http://localhost", event_hooks=hooks
        ) as http:
            client = await sdk_client("http://localhost/a2a/counter", "HTTP+JSON", http=http)
            task = final_task(await collect(client, user_message("hi")))
            with pytest.raises(Exception):  # noqa: B017, PT011 - a finished task: the SDK's error
                async for _ in client.subscribe(SubscribeToTaskRequest(id=task.id)):
                    pass
            with pytest.raises(Exception):  # noqa: B017, PT011
                await client.cancel_task(CancelTaskRequest(id=task.id))
    assert counter.runs == 2
    posts = [(path, typed, status) for method, path, typed, status in sent if method == "POST"]
    assert ("/acp/runs", None, 200) in posts, posts
    assert any(p.endswith("/cancel") and t is None and s == 409 for p, t, s in posts), posts
    subscribes = [(t, s) for p, t, s in posts if p.endswith(":subscribe")]
    assert subscribes and all(t is None and s not in (404, 415) for t, s in subscribes), posts
    assert all(status != 415 for _, _, status in posts), posts


@pytest.mark.parametrize(
    "host", ["LOCALHOST:8000", "LocalHost", "127.0.0.1:9", "[::1]:8000", "Agents.EXAMPLE:443"]
)
async def test_host_names_match_case_insensitively_on_every_surface(host: str) -> None:
    _, agents = counting()
    async with running(agents, settings(allowed_hosts=["agents.Example"])) as (_, http):
        for path in ("/v1/chat/completions", "/a2a/counter", "/mcp", "/acp/runs"):
            headers = {**HEADERS, "host": host}
            answer = await http.post(path, json=RUNS[path][0], headers=headers)
            assert answer.status_code == 200, (path, host, answer.text)
            origin = {**headers, "origin": f"http://{host}"}  # the server's own page
            answer = await http.post(path, json=RUNS[path][0], headers=origin)
            assert answer.status_code == 200, (path, host, answer.text)


@pytest.mark.parametrize(
    ("overrides", "accepted", "refused"),
    [
        # Beyond loopback with no hosts named: no Host check, /mcp included (the MCP
        # SDK's own check refused these, in plain text).
        ({}, ["svc:8000", "10.0.0.7"], []),
        # MCP's allowed hosts turn the check on for every surface, and every surface
        # accepts the hosts named in AGENTHOST_ALLOWED_HOSTS, /mcp included.
        ({"mcp_allowed_hosts": ["MCP.example"]}, ["mcp.example:443"], ["svc:8000"]),
        ({"allowed_hosts": ["agents.example"]}, ["AGENTS.example"], ["mcp.example"]),
    ],
)
async def test_every_surface_checks_the_same_hosts(
    overrides: dict[str, Any], accepted: list[str], refused: list[str]
) -> None:
    _, agents = counting()
    async with running(agents, settings(host="0.0.0.0", **overrides)) as (_, http):
        for path in ("/v1/chat/completions", "/a2a/counter", "/mcp", "/acp/runs"):
            for host in accepted:
                headers = {**HEADERS, "host": host}
                answer = await http.post(path, json=RUNS[path][0], headers=headers)
                assert answer.status_code == 200, (path, host, answer.text)
            for host in refused:
                headers = {**HEADERS, "host": host}
                answer = await http.post(path, json=RUNS[path][0], headers=headers)
                assert answer.status_code == 421, (path, host, answer.text)
                assert answer.headers["content-type"] == "application/json"
                assert "Host" in answer.text


async def test_the_openapi_document_lists_the_agent_cards_404() -> None:
    _, agents = counting()
    agents["other"] = ChatAgent("other", FunctionModel(Counter()))  # two: no default agent
    async with running(agents, settings()) as (_, http):
        document = (await http.get("/openapi.json")).json()
        card = document["paths"]["/.well-known/agent-card.json"]["get"]["responses"]
        assert "404" in card, sorted(card)
        schema = card["404"]["content"]["application/json"]["schema"]
        missing = await http.get("/.well-known/agent-card.json")
        assert missing.status_code == 404
        assert set(schema["required"]) <= set(missing.json()), (schema, missing.text)
        deleted = document["paths"]["/v1/responses/{response_id}"]["delete"]["responses"]
        assert "415" in deleted


async def test_behind_a_path_prefix_the_refusals_keep_their_protocols_shape() -> None:
    counter, agents = counting()
    async with running(agents, settings()) as (app, _):
        prefixed = httpx.ASGITransport(app=app, root_path="/x")  # a proxy's --root-path
        async with httpx.AsyncClient(transport=prefixed, base_url="http://localhost/x") as http:
            for path in ("/a2a/counter/message:send", "/a2a/counter", "/acp/runs"):
                raw = orjson.dumps(RUNS[path][0])
                browser = {**HEADERS, "origin": "http://localhost:5173"}
                answer = await http.post(path, content=raw, headers=browser)
                assert answer.status_code == 415 and RUNS[path][1](answer.json()), answer.text
            cancel = await http.post("/a2a/counter/tasks/nope:cancel", headers=HEADERS)
            assert cancel.status_code == 404, cancel.text
            assert (await http.get("/healthz", headers={"host": "10.0.0.7"})).status_code == 200
    assert counter.runs == 0
