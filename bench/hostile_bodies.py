"""How long one hostile request body holds the event loop: ``/healthz`` timed meanwhile.

Starts ``agenthost serve`` (an ``echo`` agent over every protocol, gRPC on)
from a source tree, sends each hostile body of issue 34 once while another
connection asks ``/healthz`` every 10 ms, and prints per body: the answer's
status, the request's seconds and the slowest ``/healthz`` (the stall).

    .venv/bin/python bench/hostile_bodies.py                 # this tree
    .venv/bin/python bench/hostile_bodies.py --source /tmp/main-src  # e.g. `git archive main`
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import orjson

HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parent.parent
CONFIG = "agents:\n  - name: echo\n    description: Repeats what you say.\n    model: echo\n"
V1 = {"A2A-Version": "1.0", "content-type": "application/json"}
JSON = {"content-type": "application/json"}


def message(parts: list[object]) -> dict[str, object]:
    return {"messageId": "m", "role": "ROLE_USER", "parts": parts}


def hostile() -> Iterator[tuple[str, str, bytes, dict[str, str]]]:
    """(name, path, body, headers): the hostile bodies, each within the 4 MiB body limit."""
    million = [0] * 1_000_000
    keys = {f"k{i}": 0 for i in range(300_000)}
    rest = orjson.dumps({"message": message([{"data": million}])})
    yield "a2a rest data 1M", "/a2a/echo/message:send", rest, V1
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
    keyed = orjson.dumps({**rpc, "params": {"message": message([{"data": keys}])}})
    yield "a2a jsonrpc 300k keys", "/a2a/echo", keyed, V1
    many = [{"role": "user", "content": "x"}] * 120_000
    chat = orjson.dumps({"model": "echo", "messages": many})
    yield "chat 120k messages", "/v1/chat/completions", chat, {"content-type": "application/json"}
    chat = orjson.dumps(
        {
            "model": "echo",
            "messages": [{"role": "user", "content": "x"}],
            "response_format": {"type": "json_schema", "x": million},
        }
    )
    yield "chat 1M array", "/v1/chat/completions", chat, {"content-type": "application/json"}
    items = [{"role": "user", "content": "x"}] * 120_000
    responses = orjson.dumps({"model": "echo", "input": items})
    yield "responses 120k items", "/v1/responses", responses, {"content-type": "application/json"}
    acp = orjson.dumps(
        {
            "agent_name": "echo",
            "input": [
                {"role": "user", "parts": [{"content_type": "text/plain", "content": "x"}] * 80_000}
            ],
        }
    )
    yield "acp 80k parts", "/acp/runs", acp, {"content-type": "application/json"}
    mcp = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"input": million}},
        }
    )
    mcp_headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    yield "mcp 1M array", "/mcp", mcp, mcp_headers
    served = {"name": "echo", "arguments": {"input": "x", "extra": [0.5] * 80_000}}
    mcp = orjson.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": served})
    yield "mcp 80k values (in limits)", "/mcp", mcp, mcp_headers
    chat = orjson.dumps({"model": "echo", "messages": [{"role": "user", "content": "x"}] * 20_000})
    yield "chat 20k messages (in limits)", "/v1/chat/completions", chat, JSON
    small = orjson.dumps({"message": message([{"data": [0.5] * 60_000}])})
    yield f"a2a rest {len(small) // 1024} KB (in limits)", "/a2a/echo/message:send", small, V1


def grpc_hostile(port: int) -> Callable[[], str]:
    """A gRPC SendMessage with 300,000 numbers in a data part."""
    import grpc
    from a2a.types import a2a_pb2, a2a_pb2_grpc
    from google.protobuf.json_format import ParseDict

    request = ParseDict(
        {"tenant": "echo", "message": message([{"data": [1.5] * 300_000}])},
        a2a_pb2.SendMessageRequest(),
    )

    def call() -> str:
        with grpc.insecure_channel(f"{HOST}:{port}") as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            try:
                stub.SendMessage(request, timeout=120, metadata=[("a2a-version", "1.0")])
                return "OK"
            except grpc.RpcError as exc:
                return str(exc.code().name)  # type: ignore[attr-defined]

    return call


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def stall(url: str, work: Callable[[], str]) -> tuple[str, float, float]:
    """(outcome of ``work``, its seconds, slowest /healthz while it ran)."""
    done, probing = threading.Event(), threading.Event()
    worst = 0.0

    def probe() -> None:
        nonlocal worst
        with httpx.Client(base_url=url, timeout=120) as client:
            while not done.is_set():
                started = time.perf_counter()
                with contextlib.suppress(httpx.TimeoutException):  # counted as time waited
                    client.get("/healthz")
                worst = max(worst, time.perf_counter() - started)
                probing.set()
                time.sleep(0.01)

    prober = threading.Thread(target=probe)
    prober.start()
    probing.wait(30)  # its connection made: the first probes are not the stall
    started = time.perf_counter()
    try:
        outcome = work()
    finally:
        took = time.perf_counter() - started
        time.sleep(0.05)  # what the request left running (a run, a conversion) too
        done.set()
        prober.join()
    return outcome, took, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--source", type=Path, help="a tree with src/agenthost (default: this)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds one request may take")
    args = parser.parse_args()
    port, grpc_port = free_port(), free_port()
    url = f"http://{HOST}:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTHOST_")}
    env |= {"AGENTHOST_A2A_GRPC_PORT": str(grpc_port), "AGENTHOST_LOG_LEVEL": "warning"}
    if args.source:
        env["PYTHONPATH"] = str(args.source / "src")
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "agents.yaml"
        config.write_text(CONFIG)
        command = [
            sys.executable,
            "-P",
            "-m",
            "agenthost.app",
            "serve",
            "--config",
            str(config),
            "--port",
            str(port),
        ]
        server = subprocess.Popen(command, env=env, cwd=tmp, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    if httpx.get(f"{url}/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.2)
            print(f"{'body':32} {'MB':>5} {'answer':>8} {'took s':>7} {'stall s':>8}")
            _, took, worst = stall(url, lambda: time.sleep(1.0) or "-")
            print(f"{'(none: 1 s idle)':32} {'':5} {'-':>8} {took:7.2f} {worst:8.3f}")
            with httpx.Client(base_url=url, timeout=args.timeout) as client:
                for name, path, body, headers in hostile():

                    def send(
                        path: str = path, body: bytes = body, headers: dict[str, str] = headers
                    ) -> str:
                        try:
                            return str(client.post(path, content=body, headers=headers).status_code)
                        except httpx.TimeoutException:
                            return "timeout"

                    outcome, took, worst = stall(url, send)
                    print(f"{name:32} {len(body) / 1e6:5.1f} {outcome:>8} {took:7.2f} {worst:8.3f}")
            outcome, took, worst = stall(url, grpc_hostile(grpc_port))
            print(f"{'a2a grpc 300k numbers':32} {'':5} {outcome:>8} {took:7.2f} {worst:8.3f}")
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:  # still busy with a body: before the fix
                server.kill()
                server.wait()


if __name__ == "__main__":
    main()
