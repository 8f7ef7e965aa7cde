"""No one request body holds the event loop: the hostile bodies of issue 34 against a real server.

One ``agenthost serve`` (every protocol, gRPC on; not under coverage, as it
times stalls) for the module; each body is sent while another connection asks
``/healthz`` every 10 ms, and must be refused with its protocol's own 4xx naming
the limit, or served, either way without ``/healthz`` waiting over the bound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import orjson
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc
from google.protobuf.json_format import ParseDict

from tests.commands import free_port, serving, untraced_env

pytestmark = pytest.mark.slow

# The goal is 50 ms (bench/hostile_bodies.py measures it); the stalls this guards
# against were 1.4-27.6 s. A 2-core machine under load gets slack: 0.25 s was
# crossed once at load ~4 by a body served off the loop (its thread and the
# loop trading the GIL), not by a stall.
STALL = 0.5
V1 = {"A2A-Version": "1.0", "content-type": "application/json"}
JSON = {"content-type": "application/json"}
MCP = {**JSON, "accept": "application/json, text/event-stream"}
MILLION = [0] * 1_000_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    config = tmp_path_factory.mktemp("hostile") / "agents.yaml"
    config.write_text("agents:\n  - name: echo\n    description: Echo.\n    model: echo\n")
    grpc_port = free_port()
    env = untraced_env(AGENTHOST_A2A_GRPC_PORT=str(grpc_port), AGENTHOST_LOG_LEVEL="warning")
    with serving(Path(config), env) as (_, url):
        # Warm: first requests import and build what later ones reuse.
        warm = orjson.dumps({"message": _message([{"data": [0] * 40_000}])})
        for _ in range(2):
            httpx.post(f"{url}/a2a/echo/message:send", content=warm, headers=V1, timeout=60)
        yield url, grpc_port


def _stalled(url: str, work: Callable[[], Any]) -> tuple[Any, float]:
    """``work()``'s result and the slowest ``/healthz`` while it ran."""
    done, worst = threading.Event(), [0.0]

    def probe() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            while not done.is_set():
                started = time.perf_counter()
                assert client.get("/healthz").status_code == 200
                worst[0] = max(worst[0], time.perf_counter() - started)
                time.sleep(0.01)

    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(0.05)
    try:
        result = work()
        time.sleep(0.05)
    finally:
        done.set()
        prober.join()
    return result, worst[0]


def _message(parts: list[Any]) -> dict[str, Any]:
    return {"messageId": "m", "role": "ROLE_USER", "parts": parts}


RPC = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
HOSTILE: list[tuple[str, str, Any, dict[str, str]]] = [
    ("a2a-rest-1M", "/a2a/echo/message:send", {"message": _message([{"data": MILLION}])}, V1),
    (
        "a2a-jsonrpc-300k-keys",
        "/a2a/echo",
        {**RPC, "params": {"message": _message([{"data": {f"k{i}": 0 for i in range(300_000)}}])}},
        V1,
    ),
    (
        "chat-120k-messages",
        "/v1/chat/completions",
        {"model": "echo", "messages": [{"role": "user", "content": "x"}] * 120_000},
        JSON,
    ),
    (
        "chat-1M-array",
        "/v1/chat/completions",
        {"model": "echo", "messages": [{"role": "user", "content": "x"}], "x": MILLION},
        JSON,
    ),
    (
        "responses-120k-items",
        "/v1/responses",
        {"model": "echo", "input": [{"role": "user", "content": "x"}] * 120_000},
        JSON,
    ),
    (
        "acp-80k-parts",
        "/acp/runs",
        {
            "agent_name": "echo",
            "input": [
                {"role": "user", "parts": [{"content_type": "text/plain", "content": "x"}] * 80_000}
            ],
        },
        JSON,
    ),
    (
        "mcp-1M-array",
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"a": MILLION}},
        },
        MCP,
    ),
]


@pytest.mark.parametrize(
    ("path", "body", "headers"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE]
)
def test_a_hostile_body_is_refused_naming_the_limit_without_a_stall(
    server: tuple[str, int], path: str, body: Any, headers: dict[str, str]
) -> None:
    url, _ = server
    content = orjson.dumps(body)
    assert len(content) < 4 * 1024 * 1024  # within the body limit: the structure is refused
    with httpx.Client(base_url=url, timeout=60) as client:
        answer, worst = _stalled(url, lambda: client.post(path, content=content, headers=headers))
    assert answer.status_code == 400, answer.text
    assert "AGENTHOST_MAX_JSON_VALUES" in answer.text
    assert worst < STALL, f"/healthz waited {worst:.3f} s"


def test_a_large_body_within_the_limits_is_served_off_the_loop(server: tuple[str, int]) -> None:
    url, _ = server
    data = {f"k{i}": [1.5, "x", None, i] for i in range(10_000)}  # 50,000 values, ~0.3 MB
    body = orjson.dumps({"message": _message([{"data": data}])})
    with httpx.Client(base_url=url, timeout=60) as client:
        answer, worst = _stalled(
            url, lambda: client.post("/a2a/echo/message:send", content=body, headers=V1)
        )
    assert answer.status_code == 200, answer.text
    assert worst < STALL, f"/healthz waited {worst:.3f} s"


def test_grpc_300k_numbers_are_refused_without_a_stall(server: tuple[str, int]) -> None:
    url, grpc_port = server
    request = ParseDict(
        {"tenant": "echo", "message": _message([{"data": [1.5] * 300_000}])},
        a2a_pb2.SendMessageRequest(),
    )

    def call() -> grpc.StatusCode:
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            try:
                stub.SendMessage(request, timeout=60)
            except grpc.RpcError as exc:
                details: str = exc.details()  # type: ignore[attr-defined]
                code: grpc.StatusCode = exc.code()  # type: ignore[attr-defined]
                return code if "AGENTHOST_MAX_JSON_VALUES" in details else grpc.StatusCode.UNKNOWN
            return grpc.StatusCode.OK

    code, worst = _stalled(url, call)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert worst < STALL, f"/healthz waited {worst:.3f} s"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":[NaN]}]}}',
        b'{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":[1e999999]}]}}',
        b'{"message":{"messageId":"\\ud800","role":"ROLE_USER","parts":[{"text":"x"}]}}',
    ],
    ids=["NaN", "1e999999", "lone surrogate"],
)
def test_json_that_python_reads_but_json_forbids_is_the_protocols_400(
    server: tuple[str, int], raw: bytes
) -> None:
    url, _ = server
    with httpx.Client(base_url=url, timeout=60) as client:
        rest = client.post("/a2a/echo/message:send", content=raw, headers=V1)
        assert rest.status_code == 400, rest.text
        assert rest.json()["error"]["status"] == "INVALID_ARGUMENT"
        envelope = b'{"jsonrpc":"2.0","id":"\\ud800","method":"SendMessage","params":' + raw + b"}"
        rpc = client.post("/a2a/echo", content=envelope, headers=V1)
        assert rpc.headers["content-type"] == "application/json"
        assert rpc.json()["error"]["code"] == -32700, rpc.text


def test_a_chat_of_20k_messages_is_converted_off_the_loop(server: tuple[str, int]) -> None:
    url, _ = server
    body = {"model": "echo", "messages": [{"role": "user", "content": "x"}] * 20_000}
    with httpx.Client(base_url=url, timeout=60) as client:
        answer, worst = _stalled(
            url,
            lambda: client.post("/v1/chat/completions", content=orjson.dumps(body), headers=JSON),
        )
    assert answer.status_code == 200, answer.text
    assert worst < STALL, f"/healthz waited {worst:.3f} s"
