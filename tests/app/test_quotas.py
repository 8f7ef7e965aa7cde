"""Quotas per principal in one process: the request rate, runs at once, tokens a day.

The app runs in process with its lifespan; the counters are the in-process
store (Redis and two replicas: ``tests/scale/test_quotas.py``).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
import grpc.aio
import httpx
import openai
import pytest
from a2a.types import Message, Part, Role, SendMessageRequest, a2a_pb2_grpc

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel, FunctionModel, ModelRequest
from agenthost.app.cli import main
from agenthost.app.quotas import seconds_to_midnight
from agenthost.app.settings import Settings
from tests.conftest import running
from tests.upstream import free_port

pytestmark = pytest.mark.anyio

ALICE, BOB = "alice-key-0123456789", "bob-key-0123456789ab"
KEYS = [f"alice:{ALICE}", f"bob:{BOB}"]


def auth(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def chat(text: str = "one two three", model: str = "echo") -> dict[str, object]:
    return {"model": model, "messages": [{"role": "user", "content": text}]}


def settings(tmp_path: Path, quotas: str = "", **values: object) -> Settings:
    file = None
    if quotas:
        file = tmp_path / "quotas.yaml"
        file.write_text(quotas)
    values = {"api_keys": KEYS, **values}  # the keys of alice and bob, unless told
    return Settings(
        adapters=["openai", "a2a"],
        playground=False,
        quotas_file=file,
        **values,  # type: ignore[arg-type]
    )


def echo() -> dict[str, Agent]:
    return {"echo": ChatAgent("echo", EchoModel())}


async def burst(client: httpx.AsyncClient, key: str, limit: int) -> tuple[int, httpx.Response]:
    """Requests as fast as they go until one is refused: (how many passed, the refusal)."""
    for passed in range(limit):
        answer = await client.get("/v1/models", headers=auth(key))
        if answer.status_code != 200:
            return passed, answer
    raise AssertionError(f"no refusal in {limit} requests")


def refusals(metrics: str, quota: str) -> float:
    """``agenthost_quota_refusals_total{quota=...}`` in a /metrics page."""
    for line in metrics.splitlines():
        if line.startswith(f'agenthost_quota_refusals_total{{quota="{quota}"}} '):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no refusal series for {quota}")


async def test_a_burst_over_the_rate_gets_429_and_retry_after_lets_the_next_in(
    tmp_path: Path,
) -> None:
    async with running(echo(), settings(tmp_path, quota_requests_per_minute=60)) as (_, client):
        start = time.monotonic()
        passed, refused = await burst(client, ALICE, 200)
        # 60 at once, then one a second: the burst took a fraction of a second.
        assert 60 <= passed <= 60 + (time.monotonic() - start) + 1
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "rate_limit_exceeded"  # OpenAI's envelope
        assert refused.headers["retry-after"] == "1"
        # Another principal has its own rate; health and discovery are not counted.
        assert (await client.get("/v1/models", headers=auth(BOB))).status_code == 200
        assert (await client.get("/healthz", headers=auth(ALICE))).status_code == 200
        card = await client.get("/a2a/echo/.well-known/agent-card.json", headers=auth(ALICE))
        assert card.status_code == 200
        # A JSON-RPC surface answers in its own shape (the next second may have come: then
        # this one passes and the next is refused).
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
        for _ in range(3):
            answer = await client.post("/a2a/echo", json=rpc, headers=auth(ALICE))
            if answer.status_code == 429:
                break
        assert answer.status_code == 429 and answer.json()["error"]["code"] == -32600
        await asyncio.sleep(int(answer.headers["retry-after"]))
        assert (await client.get("/v1/models", headers=auth(ALICE))).status_code == 200
        metrics = (await client.get("/metrics", headers=auth(BOB))).text
        assert refusals(metrics, "requests_per_minute") >= 2
        assert refusals(metrics, "tokens_per_day") == 0


async def test_the_openai_sdk_gets_rate_limited_and_its_retry_honours_retry_after(
    tmp_path: Path,
) -> None:
    async with running(echo(), settings(tmp_path, quota_requests_per_minute=60)) as (_, http):
        patient, hasty = (
            openai.AsyncOpenAI(
                base_url="http://localhost/v1", api_key=ALICE, http_client=http, max_retries=n
            )
            for n in (2, 0)
        )
        await burst(http, ALICE, 200)
        for _ in range(3):  # the next second may have come: then one passes
            try:
                await hasty.models.list()
            except openai.RateLimitError as exc:
                refused = exc
                break
        assert refused.response.headers["retry-after"] == "1"
        answers: list[tuple[int, float]] = []

        async def seen(response: httpx.Response) -> None:
            answers.append((response.status_code, time.monotonic()))

        http.event_hooks = {"request": [], "response": [seen]}
        for _ in range(3):  # until the SDK's first try is refused
            await burst(http, ALICE, 200)
            answers.clear()
            models = await patient.models.list()  # retried after the second it was told
            if answers[0][0] == 429:
                break
        assert [m.id for m in models.data] == ["echo"]
        assert [status for status, _ in answers] == [429, 200]
        assert answers[1][1] - answers[0][1] >= 0.9


async def test_a_token_budget_stops_one_principal_for_the_day_and_not_another(
    tmp_path: Path,
) -> None:
    quotas = "principals:\n  alice: {tokens_per_day: 10}\n"
    async with running(echo(), settings(tmp_path, quotas)) as (_, client):
        # 6 words in, 6 out: 12 tokens, over alice's 10 (a run in progress is not cut).
        first = await client.post(
            "/v1/chat/completions", json=chat("a b c d e f"), headers=auth(ALICE)
        )
        assert first.status_code == 200 and first.json()["usage"]["total_tokens"] == 12
        for _ in range(50):  # counted as the run finished, a moment later
            refused = await client.post("/v1/chat/completions", json=chat(), headers=auth(ALICE))
            if refused.status_code == 429:
                break
            await asyncio.sleep(0.02)
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "rate_limit_exceeded"
        assert abs(int(refused.headers["retry-after"]) - seconds_to_midnight()) < 5
        assert refused.headers["x-should-retry"] == "false"
        # Reads go on; bob, with no budget, runs on.
        assert (await client.get("/v1/models", headers=auth(ALICE))).status_code == 200
        for _ in range(3):
            answer = await client.post("/v1/chat/completions", json=chat(), headers=auth(BOB))
            assert answer.status_code == 200
        metrics = (await client.get("/metrics", headers=auth(BOB))).text
        assert 'agenthost_quota_refusals_total{quota="tokens_per_day"} 1.0' in metrics


async def test_the_run_past_the_concurrent_limit_is_refused(tmp_path: Path) -> None:
    release, started = asyncio.Event(), asyncio.Semaphore(0)

    async def held(request: ModelRequest) -> str:
        started.release()
        await release.wait()
        return "done"

    agents: dict[str, Agent] = {"held": ChatAgent("held", FunctionModel(held))}
    quotas = "default: {concurrent_runs: 2}\n"
    async with running(agents, settings(tmp_path, quotas)) as (_, client):

        async def run(key: str) -> httpx.Response:
            body = {**chat(model="held"), "stream": True}
            return await client.post("/v1/chat/completions", json=body, headers=auth(key))

        streams = [asyncio.create_task(run(ALICE)) for _ in range(2)]
        for _ in streams:
            await started.acquire()
        third = await run(ALICE)
        assert third.status_code == 429 and third.headers["retry-after"] == "1"
        assert "2 runs at once" in third.json()["error"]["message"]
        # Reads are not runs; another principal has slots of its own.
        assert (await client.get("/v1/models", headers=auth(ALICE))).status_code == 200
        bobs = asyncio.create_task(run(BOB))
        await started.acquire()
        release.set()
        answers = await asyncio.gather(*streams, bobs)
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert (await run(ALICE)).status_code == 200  # the slots were given back


SHAPES = {
    "/v1/chat/completions": lambda body: body["error"]["type"] == "rate_limit_error",
    "/v1/messages": lambda body: body["error"]["type"] == "rate_limit_error",
    "/mcp": lambda body: body["error"]["data"]["code"] == "rate_limit_exceeded",
    "/acp/runs": lambda body: body["code"] == "rate_limit_exceeded",
    "/a2a/echo": lambda body: body["jsonrpc"] == "2.0" and body["error"]["code"] == -32600,
    "/a2a/echo/v1/message:send": lambda body: body["error"]["code"] == 429,
    "/ag-ui/echo": lambda body: body["error"]["code"] == "rate_limit_exceeded",
    "/ai-sdk/echo": lambda body: body["error"]["code"] == "rate_limit_exceeded",
}


async def test_every_surface_refuses_in_its_own_shape(tmp_path: Path) -> None:
    every = Settings(api_keys=KEYS, playground=False, quota_requests_per_minute=1)
    async with running(echo(), every) as (_, client):
        assert (await client.get("/v1/models", headers=auth(ALICE))).status_code == 200
        headers = {**auth(ALICE), "accept": "application/json, text/event-stream"}
        for path, shaped in SHAPES.items():
            answer = await client.post(path, json={}, headers=headers)
            assert answer.status_code == 429, (path, answer.text)
            assert 55 <= int(answer.headers["retry-after"]) <= 60, path
            assert shaped(answer.json()), (path, answer.text)


def test_a_wrong_quotas_file_stops_start_up_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - {name: echo, model: echo}\n")
    quotas = tmp_path / "quotas.yaml"
    quotas.write_text("principals:\n  alice: {requests_a_minute: 5}\n")
    monkeypatch.setenv("AGENTHOST_QUOTAS_FILE", str(quotas))
    assert main(["check", "--config", str(config)]) == 2
    error = capsys.readouterr().err
    assert str(quotas) in error and "requests_a_minute" in error


def hello(text: str) -> SendMessageRequest:
    message = Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text=text)])
    return SendMessageRequest(message=message)


async def test_grpc_calls_past_a_quota_get_resource_exhausted(tmp_path: Path) -> None:
    port = free_port()
    quotas = "principals:\n  alice: {requests_per_minute: 2}\n  bob: {tokens_per_day: 10}\n"
    grpc_settings = settings(tmp_path, quotas, a2a_grpc_port=port)
    async with running(echo(), grpc_settings) as (_, client):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            for _ in range(2):
                await stub.SendMessage(hello("hi"), metadata=[("authorization", f"Bearer {ALICE}")])
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.SendMessage(hello("hi"), metadata=[("authorization", f"Bearer {ALICE}")])
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            trailers = dict(caught.value.trailing_metadata() or ())
            assert 28 <= int(trailers["retry-after"]) <= 30  # 2 a minute: one every 30 s
            # bob's run over gRPC counts its tokens (12 of 10): the next is refused.
            bobs = [("authorization", f"Bearer {BOB}")]
            answer = await stub.SendMessage(hello("a b c d e f"), metadata=bobs)
            assert answer.task.artifacts[0].parts[0].text == "a b c d e f"
            for _ in range(50):
                try:
                    await stub.SendMessage(hello("more"), metadata=bobs)
                except grpc.aio.AioRpcError as exc:
                    caught_code = exc.code()
                    break
                await asyncio.sleep(0.02)
            else:
                caught_code = None
            assert caught_code == grpc.StatusCode.RESOURCE_EXHAUSTED
        metrics = (await client.get("/metrics", headers=auth(BOB))).text
        assert 'agenthost_quota_refusals_total{quota="requests_per_minute"} 1.0' in metrics
        assert 'agenthost_quota_refusals_total{quota="tokens_per_day"} 1.0' in metrics


async def test_requests_pass_while_the_shared_store_is_down(tmp_path: Path) -> None:
    nowhere = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    down = settings(tmp_path, quota_requests_per_minute=1, session_store=nowhere, store_timeout=0.5)
    async with running(echo(), down) as (_, client):
        first = await client.get("/v1/models", headers=auth(ALICE))
        start = time.monotonic()
        for _ in range(5):  # over the rate, but the store cannot say so
            assert (await client.get("/v1/models", headers=auth(ALICE))).status_code == 200
        assert time.monotonic() - start < 1.5  # waiting for the store each time: 2.5 s
    assert first.status_code == 200


async def test_detached_runs_hold_their_slots_until_they_end(tmp_path: Path) -> None:
    release, started = asyncio.Event(), asyncio.Semaphore(0)

    async def held(request: ModelRequest) -> str:
        started.release()
        await release.wait()
        return "done"

    agents: dict[str, Agent] = {"held": ChatAgent("held", FunctionModel(held))}
    background = {"model": "held", "input": "go", "background": True}
    async with running(agents, settings(tmp_path, "default: {concurrent_runs: 2}\n")) as (
        _,
        client,
    ):
        for _ in range(2):
            answer = await client.post("/v1/responses", json=background, headers=auth(ALICE))
            assert answer.status_code == 200, answer.text
            await started.acquire()
        # No request is open, but two runs are.
        third = await client.post("/v1/responses", json=background, headers=auth(ALICE))
        assert third.status_code == 429, third.text
        release.set()
        for _ in range(100):  # the slots come back as the runs end
            answer = await client.post("/v1/responses", json=background, headers=auth(ALICE))
            if answer.status_code == 200:
                break
            await asyncio.sleep(0.02)
        assert answer.status_code == 200, answer.text


TENANT_KEYS = {
    "acme/alice": "acme-alice-key-0123456789",
    "acme/bob": "acme-bob-key-0123456789a",
    "other/alice": "other-alice-key-01234567",
}


async def test_a_tenants_rate_is_shared_by_its_principals_and_holds_no_other_tenant(
    tmp_path: Path,
) -> None:
    quotas = "default: {requests_per_minute: 50}\ntenants:\n  acme: {requests_per_minute: 20}\n"
    keys = [f"{name}:{key}" for name, key in TENANT_KEYS.items()]
    with_tenants = settings(tmp_path, quotas, api_keys=keys)
    async with running(echo(), with_tenants) as (_, client):
        start = time.monotonic()
        # acme's two principals share its 20 a minute: alice takes 12, bob gets what is left.
        for _ in range(12):
            ok = await client.get("/v1/models", headers=auth(TENANT_KEYS["acme/alice"]))
            assert ok.status_code == 200
        passed, refused = await burst(client, TENANT_KEYS["acme/bob"], 50)
        assert 8 <= passed <= 8 + 3 * (time.monotonic() - start) + 1
        assert refused.status_code == 429 and "retry-after" in refused.headers
        assert "this tenant's 20 requests a minute" in refused.json()["error"]["message"]
        # A principal of another tenant (with acme's principal name) has only its own 50.
        passed, refused = await burst(client, TENANT_KEYS["other/alice"], 100)
        assert 50 <= passed <= 50 + (time.monotonic() - start) + 1
        assert "this principal's 50 requests a minute" in refused.json()["error"]["message"]
        metrics = (await client.get("/metrics", headers=auth(TENANT_KEYS["other/alice"]))).text
        assert refusals(metrics, "requests_per_minute") >= 2


async def test_a_tenants_token_budget_is_spent_by_all_its_principals(tmp_path: Path) -> None:
    quotas = "tenants:\n  acme: {tokens_per_day: 5}\n"
    keys = [f"{name}:{key}" for name, key in TENANT_KEYS.items()]
    async with running(echo(), settings(tmp_path, quotas, api_keys=keys)) as (_, client):
        spent = await client.post(
            "/v1/chat/completions", json=chat(), headers=auth(TENANT_KEYS["acme/alice"])
        )
        assert spent.status_code == 200
        await asyncio.sleep(0.1)  # the tokens are counted just after the run
        stopped = await client.post(
            "/v1/chat/completions", json=chat(), headers=auth(TENANT_KEYS["acme/bob"])
        )
        assert stopped.status_code == 429, stopped.text
        assert "this tenant used its 5 model tokens" in stopped.json()["error"]["message"]
        other = await client.post(
            "/v1/chat/completions", json=chat(), headers=auth(TENANT_KEYS["other/alice"])
        )
        assert other.status_code == 200


async def test_a_tenants_runs_at_once_hold_its_principals_together(tmp_path: Path) -> None:
    release, started = asyncio.Event(), asyncio.Semaphore(0)

    async def held(request: ModelRequest) -> str:
        started.release()
        await release.wait()
        return "done"

    agents: dict[str, Agent] = {"held": ChatAgent("held", FunctionModel(held))}
    quotas = "default: {concurrent_runs: 5}\ntenants:\n  acme: {concurrent_runs: 1}\n"
    keys = [f"{name}:{key}" for name, key in TENANT_KEYS.items()]
    async with running(agents, settings(tmp_path, quotas, api_keys=keys)) as (_, client):

        async def run(principal: str) -> httpx.Response:
            body = {**chat(model="held"), "stream": True}
            headers = auth(TENANT_KEYS[principal])
            return await client.post("/v1/chat/completions", json=body, headers=headers)

        alices = asyncio.create_task(run("acme/alice"))
        await started.acquire()
        bobs = await run("acme/bob")  # acme's one slot is alice's
        assert bobs.status_code == 429, bobs.text
        assert "this tenant's 1 runs at once" in bobs.json()["error"]["message"]
        others = asyncio.create_task(run("other/alice"))  # another tenant: not held
        await started.acquire()
        release.set()
        assert [a.status_code for a in await asyncio.gather(alices, others)] == [200, 200]
        assert (await run("acme/bob")).status_code == 200  # acme's slot was given back
