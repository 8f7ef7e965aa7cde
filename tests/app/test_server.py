"""The composition root: readiness, auth and body limits on every surface."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import openai
import pytest

from agenthost.agents import Agent, ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.server import create_app
from agenthost.app.settings import Settings
from tests.commands import serving
from tests.conftest import openai_client, running

pytestmark = pytest.mark.anyio


def echo() -> dict[str, Agent]:
    return {"echo": ChatAgent("echo", EchoModel())}


async def test_ready_only_while_the_lifespan_runs() -> None:
    app = create_app(Settings(), echo())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        assert (await client.get("/readyz")).status_code == 503
        assert (await client.get("/healthz")).status_code == 200
    async with running(echo()) as (_, client):
        ready = await client.get("/readyz")
        assert ready.status_code == 200 and ready.json() == {"status": "ready", "agents": 1}


async def test_api_keys_guard_every_surface_in_its_own_error_shape() -> None:
    settings = Settings(api_keys=["k-one-0123456789abcdef", "k-two-0123456789abcdef"])
    async with openai_client(echo(), settings, api_key="wrong") as client:
        with pytest.raises(openai.AuthenticationError) as caught:
            await client.models.list()
        assert caught.value.status_code == 401
        assert caught.value.code == "invalid_api_key"
    async with openai_client(echo(), settings, api_key="k-two-0123456789abcdef") as client:
        assert [m.id for m in (await client.models.list()).data] == ["echo"]
    async with running(echo(), settings) as (_, client):
        assert (await client.get("/healthz")).status_code == 200
        assert (await client.get("/readyz")).status_code == 200
        assert (
            await client.get("/v1/models", headers={"x-api-key": "k-one-0123456789abcdef"})
        ).status_code == 200
        missing = await client.post("/v1/chat/completions", json={})
        assert missing.status_code == 401
        assert missing.json()["error"]["type"] == "authentication_error"
        assert missing.headers["www-authenticate"] == "Bearer"


def test_api_keys_come_comma_separated_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTHOST_API_KEYS", "a, b")
    assert [k.get_secret_value() for k in Settings().api_keys] == ["a", "b"]


async def test_large_bodies_get_413() -> None:
    settings = Settings(max_body_bytes=2048)
    async with running(echo(), settings) as (_, client):
        big = {"model": "echo", "messages": [{"role": "user", "content": "x" * 4096}]}
        response = await client.post("/v1/chat/completions", json=big)
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "request_too_large"

        async def chunks():  # type: ignore[no-untyped-def]
            yield b'{"model": "echo", "messages": [{"role": "user", "content": "'
            yield b"y" * 4096
            yield b'"}]}'

        json_type = {"content-type": "application/json"}
        streamed = await client.post("/v1/chat/completions", content=chunks(), headers=json_type)
        assert streamed.status_code == 413
        small = {"model": "echo", "messages": [{"role": "user", "content": "fits"}]}
        assert (await client.post("/v1/chat/completions", json=small)).status_code == 200


ECHO_CONFIG = "agents:\n  - {name: echo, model: echo, description: Repeats.}\n"


@contextmanager
def agenthost_serve(
    folder: Path,
    *,
    config: str = ECHO_CONFIG,
    preexec_fn: Callable[[], None] | None = None,
    **env: str,
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``agenthost serve`` as a user runs it (one echo agent), on a free port of 127.0.0.1."""
    path = folder / "agents.yaml"
    path.write_text(config)
    full_env = {**os.environ, **env}
    with serving(path, full_env, kill=True, preexec_fn=preexec_fn) as served:
        yield served


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with agenthost_serve(
        tmp_path_factory.mktemp("live"), AGENTHOST_API_KEYS="live-key-0123456789"
    ) as (
        _,
        url,
    ):
        yield url


def test_the_sdk_against_a_live_server(live_server: str) -> None:
    with openai.OpenAI(base_url=f"{live_server}/v1", api_key="live-key-0123456789") as client:
        assert [m.id for m in client.models.list().data] == ["echo"]
        completion = client.chat.completions.create(
            model="echo", messages=[{"role": "user", "content": "over a socket"}]
        )
        assert completion.choices[0].message.content == "over a socket"
        stream = client.chat.completions.create(
            model="echo",
            messages=[{"role": "user", "content": "streamed over a socket"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
            "streamed over a socket"
        )
        assert chunks[-1].usage is not None
        with client.chat.completions.stream(
            model="echo", messages=[{"role": "user", "content": "helper"}]
        ) as helper:
            assert helper.get_final_completion().choices[0].message.content == "helper"
        first = client.responses.create(model="echo", input="first")
        second = client.responses.create(
            model="echo", input="second", previous_response_id=first.id
        )
        assert (first.output_text, second.output_text) == ("first", "second")
        with client.responses.stream(model="echo", input="streamed response") as stream_helper:
            assert stream_helper.get_final_response().output_text == "streamed response"
        bad = httpx.post(
            f"{live_server}/v1/chat/completions",
            content=b"{not json",
            headers={
                "authorization": "Bearer live-key-0123456789",
                "content-type": "application/json",
            },
        )
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_json"
        assert client.models.retrieve("echo").id == "echo"
    wrong = openai.OpenAI(base_url=f"{live_server}/v1", api_key="wrong", max_retries=0)
    with wrong, pytest.raises(openai.AuthenticationError):
        wrong.models.list()


def test_sigterm_turns_readiness_off_then_drains(tmp_path: Path) -> None:
    with agenthost_serve(tmp_path, AGENTHOST_DRAIN_SECONDS="1.5") as (process, url):
        process.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        assert httpx.get(f"{url}/readyz").status_code == 503
        body = {"model": "echo", "messages": [{"role": "user", "content": "still serving"}]}
        answer = httpx.post(f"{url}/v1/chat/completions", json=body)
        assert answer.json()["choices"][0]["message"]["content"] == "still serving"
        # A completed drain is a clean exit, not "killed by SIGTERM".
        assert process.wait(timeout=30) == 0


async def test_browsers_get_cors_headers_and_preflights_need_no_key() -> None:
    settings = Settings(api_keys=["k-0123456789abcdef"], cors_origins=["https://chat.example"])
    async with running(echo(), settings) as (_, client):
        preflight = await client.options(
            "/v1/chat/completions",
            headers={
                "origin": "https://chat.example",
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://chat.example"
        listed = await client.get(
            "/v1/models",
            headers={
                "origin": "https://chat.example",
                "authorization": "Bearer k-0123456789abcdef",
            },
        )
        assert listed.headers["access-control-allow-origin"] == "https://chat.example"
        other = await client.get(
            "/v1/models",
            headers={
                "origin": "https://evil.example",
                "authorization": "Bearer k-0123456789abcdef",
            },
        )
        assert "access-control-allow-origin" not in other.headers


async def test_an_agent_exposed_to_other_protocols_is_not_served_over_openai() -> None:
    from agenthost.app.registry import Registry

    registry = Registry.with_defaults(plugins=False)
    registry.add("open", ChatAgent("open", EchoModel()))
    registry.add("hidden", ChatAgent("hidden", EchoModel()), expose=["mcp"])
    registry.add("shown", ChatAgent("shown", EchoModel()), expose=["openai"])
    async with openai_client(registry) as client:
        assert [m.id for m in (await client.models.list()).data] == ["open", "shown"]
        with pytest.raises(openai.NotFoundError):
            await client.chat.completions.create(
                model="hidden", messages=[{"role": "user", "content": "hi"}]
            )


async def test_by_default_every_installed_protocol_is_served() -> None:
    async with running(echo()) as (app, client):
        # A prefix under another comes first (/v1/messages before /v1): routes and error
        # shapes take the first prefix a path is under.
        assert list(app.state.adapters) == [
            "/v1/messages",
            "/v1",
            "/a2a",
            "/mcp",
            "/acp",
            "/ag-ui",
            "/ai-sdk",
            "/orchestrate",
        ]
        assert (await client.get("/a2a")).status_code == 200
        assert (await client.get("/acp/ping")).status_code == 200
        assert (await client.get("/v1/models")).status_code == 200


def test_a_protocol_whose_extra_is_missing_is_skipped_unless_asked_for(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # None in sys.modules makes the SDK's import fail, as on an install without the extra
    # (the adapter package itself imports no SDK: its settings are always known).
    monkeypatch.setitem(sys.modules, "acp_sdk", None)
    with caplog.at_level("WARNING", logger="agenthost"):
        app = create_app(Settings(), echo())
    assert "/acp" not in app.state.adapters and "/v1" in app.state.adapters
    assert any(
        "not serving acp" in record.getMessage() and "agenthost[acp]" in record.getMessage()
        for record in caplog.records
    )
    with pytest.raises(ImportError, match=r"agenthost\[acp\]"):
        create_app(Settings(adapters=["openai", "acp"]), echo())
