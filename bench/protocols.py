"""agenthost against each protocol's own reference server: CPU per request, side by side.

Starts ``agenthost serve`` with one ``echo`` agent (every protocol, A2A gRPC
on), measures its start-up to ``/readyz`` and idle RSS, then starts the
references of ``bench/references.py`` (a bare FastAPI endpoint, the a2a-sdk's
server, the MCP SDK's server, acp-sdk's server), all on 127.0.0.1 under the
same uvicorn options. For every case it sends the same bounded load to
agenthost and to the reference, alternating the order round by round, and
reads each server's own CPU time from ``/proc`` before and after. It prints
CPU per request, the ratio agenthost/reference and the issue's goal.

    .venv/bin/python bench/protocols.py [--rounds 2] [--scale 1.0] [--only chat,mcp]

Load comes from ``bench/loadgen.py`` (HTTP/1.1 keep-alive) and
``bench/grpc_load.py`` (gRPC), each in its own process. ~1-2 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_overhead import (
    HOST,
    REPO,
    CpuTimes,
    Server,
    agenthost_command,
    cpu_times,
    free_port,
    start_server,
    stop_server,
)

BENCH = Path(__file__).resolve().parent
CONFIG = """\
agents:
  - name: echo
    description: Repeats what you say.
    model: echo
"""
PROMPT = "Summarise the main points of the quarterly report in three short bullets."  # 12 words
LONG_PROMPT = " ".join(f"word{i}" for i in range(96))  # 96 streamed chunks
MCP_HEADERS = ("Accept: application/json, text/event-stream", "MCP-Protocol-Version: 2025-06-18")
A2A_HEADERS = ("A2A-Version: 1.0",)


def _json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _chat(prompt: str, stream: bool = False) -> bytes:
    body: dict[str, object] = {"model": "echo", "messages": [{"role": "user", "content": prompt}]}
    return _json({**body, "stream": True} if stream else body)


_A2A_MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": PROMPT}]}
_A2A_RPC = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": _A2A_MESSAGE}}
_MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"message": PROMPT}},
}
_ACP_RUN = {
    "agent_name": "echo",
    "input": [{"role": "user", "parts": [{"content": PROMPT, "content_type": "text/plain"}]}],
    "mode": "sync",
}


@dataclass(frozen=True)
class Case:
    """One request type, sent to agenthost and to its reference."""

    name: str
    label: str
    reference: str  # a kind of bench/references.py
    paths: tuple[str, str]  # agenthost's, the reference's ("" for gRPC)
    body: bytes
    marker: str  # every good reply contains it
    requests: tuple[int, int]  # per round, agenthost and reference
    headers: tuple[str, ...] = ()
    goal: str = ""
    grpc: bool = False


CASES = (
    Case(
        "chat",
        "/v1/chat/completions",
        "bare",
        ("/v1/chat/completions",) * 2,
        _chat(PROMPT),
        '"finish_reason":"stop"',
        (2000, 2000),
        goal="<= 1.3x",
    ),
    Case(
        "responses",
        "/v1/responses store:true",
        "bare",
        ("/v1/responses",) * 2,
        _json({"model": "echo", "input": PROMPT, "store": True}),
        '"status":"completed"',
        (2000, 2000),
        goal="<= 1.6x",
    ),
    Case(
        "mcp",
        "MCP tools/call (stateless)",
        "mcp",
        ("/mcp", "/mcp"),
        _json(_MCP_CALL),
        '"isError":false',
        (400, 400),
        MCP_HEADERS,
        goal="<= 1.2x",
    ),
    Case(
        "a2a-rest",
        "A2A HTTP+JSON message:send",
        "a2a",
        ("/a2a/echo/message:send", "/message:send"),
        _json({"message": _A2A_MESSAGE}),
        "TASK_STATE_COMPLETED",
        (250, 250),
        A2A_HEADERS,
        goal="<= 1.15x",
    ),
    Case(
        "a2a-jsonrpc",
        "A2A JSON-RPC SendMessage",
        "a2a",
        ("/a2a/echo", "/"),
        _json(_A2A_RPC),
        "TASK_STATE_COMPLETED",
        (250, 250),
        A2A_HEADERS,
        goal="<= 1.15x",
    ),
    Case(
        "a2a-grpc",
        "A2A gRPC SendMessage",
        "a2a",
        ("", ""),
        b"",
        "",
        (250, 250),
        goal="<= 1.15x",
        grpc=True,
    ),
    Case(
        "acp",
        "ACP run, sync",
        "acp",
        ("/acp/runs", "/runs"),
        _json(_ACP_RUN),
        '"status":"completed"',
        (800, 60),
    ),
    Case(
        "sse",
        f"/v1 SSE, {len(PROMPT.split())} chunks",
        "bare",
        ("/v1/chat/completions",) * 2,
        _chat(PROMPT, stream=True),
        "data: [DONE]",
        (800, 800),
    ),
    Case(
        "sse-long",
        "/v1 SSE, 96 chunks",
        "bare",
        ("/v1/chat/completions",) * 2,
        _chat(LONG_PROMPT, stream=True),
        "data: [DONE]",
        (300, 300),
    ),
)


# --- servers -------------------------------------------------------------------------------


@dataclass
class Servers:
    agenthost: Server
    grpc_port: int
    references: dict[str, Server] = field(default_factory=dict)
    reference_grpc_port: int = 0
    started_in: float = 0.0  # seconds from spawn to /readyz 200
    started_cpu: float = 0.0  # CPU seconds the process used until then
    idle_rss_mib: float = 0.0
    # The same start-up serving /v1 alone (AGENTHOST_ADAPTERS=openai): wall s, CPU s, RSS MiB.
    openai_only: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _get(port: int, path: str) -> int:
    connection = http.client.HTTPConnection(HOST, port, timeout=2.0)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _post(port: int, path: str, body: bytes, headers: Sequence[str]) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(HOST, port, timeout=10.0)
    try:
        head = dict(h.split(": ", 1) for h in headers) | {"Content-Type": "application/json"}
        connection.request("POST", path, body, head)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def wait_until(server: Server, ready: Callable[[], bool], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            log = server.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{server.name} exited with {server.process.returncode}:\n{log}")
        with contextlib.suppress(OSError):
            if ready():
                return
        time.sleep(0.02)
    raise RuntimeError(f"{server.name} not ready after {timeout:.0f} s")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def reference_command(kind: str, port: int, grpc_port: int) -> list[str]:
    command = [sys.executable, str(BENCH / "references.py"), kind, "--port", str(port)]
    return [*command, "--grpc-port", str(grpc_port)] if kind == "a2a" else command


@contextlib.contextmanager
def running(workdir: Path, kinds: set[str]) -> Iterator[Servers]:
    config = workdir / "agents.yaml"
    config.write_text(CONFIG)
    grpc_port = free_port()
    env = {"AGENTHOST_A2A_GRPC_PORT": str(grpc_port)}
    spawned = time.monotonic()
    host = start_server("agenthost", agenthost_command(config, free_port()), workdir, env)
    servers = Servers(host, grpc_port)
    try:
        wait_until(host, lambda: _get(host.port, "/readyz") == 200)
        servers.started_in = time.monotonic() - spawned
        servers.started_cpu = cpu_times(host.process.pid).total
        servers.idle_rss_mib = rss_mib(host.process.pid)
        servers.reference_grpc_port = free_port()
        for kind in sorted(kinds):
            command = reference_command(kind, free_port(), servers.reference_grpc_port)
            servers.references[kind] = start_server(kind, command, workdir, {})
        for server in servers.references.values():
            wait_until(server, lambda s=server: _port_open(s.port))  # type: ignore[misc]
        yield servers
    finally:
        for server in [host, *servers.references.values()]:
            stop_server(server)


def start_up(workdir: Path, adapters: str) -> tuple[float, float, float]:
    """Spawn to ``/readyz`` 200 of agenthost serving ``adapters`` only: wall s, CPU s, RSS MiB."""
    env = {"AGENTHOST_ADAPTERS": adapters}
    spawned = time.monotonic()
    server = start_server(
        "agenthost-" + adapters,
        agenthost_command(workdir / "agents.yaml", free_port()),
        workdir,
        env,
    )
    try:
        wait_until(server, lambda: _get(server.port, "/readyz") == 200)
        wall = time.monotonic() - spawned
        return wall, cpu_times(server.process.pid).total, rss_mib(server.process.pid)
    finally:
        stop_server(server)


def _port_open(port: int) -> bool:
    with contextlib.closing(__import__("socket").create_connection((HOST, port), 1.0)):
        return True


# --- load ----------------------------------------------------------------------------------


@dataclass
class Target:
    """Where one side of a case is sent."""

    server: Server
    port: int
    path: str
    tenant: str = ""


def load_command(
    case: Case, target: Target, requests: int, concurrency: int, body: Path
) -> list[str]:
    if case.grpc:
        return [
            sys.executable,
            str(BENCH / "grpc_load.py"),
            *("--port", str(target.port), "--requests", str(requests)),
            *("--concurrency", str(concurrency), "--text", PROMPT, "--tenant", target.tenant),
        ]
    headers = [arg for header in case.headers for arg in ("--header", header)]
    return [
        sys.executable,
        str(BENCH / "loadgen.py"),
        *("--port", str(target.port), "--path", target.path, "--body", str(body)),
        *("--requests", str(requests), "--concurrency", str(concurrency)),
        *("--marker", case.marker, *headers),
    ]


def run_load(command: list[str], requests: int) -> tuple[int, int]:
    """(answered, failed) of one load run."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH-RESULT"):
            result = json.loads(line.split(" ", 1)[1])
            received = int(result["received"])
            return received, int(result["bad"]) + int(result["errors"]) + max(
                0, requests - received
            )
    raise RuntimeError(f"load generator failed ({done.returncode}): {done.stderr[-2000:]}")


@dataclass
class Side:
    requests: int = 0
    failures: int = 0
    cpu: float = 0.0
    per_round: list[float] = field(default_factory=list)  # µs per request

    @property
    def cpu_us(self) -> float:
        return self.cpu / self.requests * 1e6 if self.requests else 0.0


def measure(
    case: Case, target: Target, requests: int, concurrency: int, body: Path, side: Side
) -> None:
    before = cpu_times(target.server.process.pid)
    received, failures = run_load(load_command(case, target, requests, concurrency, body), requests)
    time.sleep(0.05)  # replies to requests still in flight when the client stopped
    used: CpuTimes = cpu_times(target.server.process.pid).since(before)
    side.requests += received
    side.failures += failures
    side.cpu += used.total
    if received:
        side.per_round.append(used.total / received * 1e6)


def targets(case: Case, servers: Servers) -> tuple[Target, Target]:
    host, reference = servers.agenthost, servers.references[case.reference]
    if case.grpc:
        return (
            Target(host, servers.grpc_port, "", tenant="echo"),
            Target(reference, servers.reference_grpc_port, ""),
        )
    return Target(host, host.port, case.paths[0]), Target(reference, reference.port, case.paths[1])


def check_reply(case: Case, target: Target) -> None:
    if case.grpc:
        return
    status, body = _post(target.port, target.path, case.body, case.headers)
    if status != 200 or case.marker.encode() not in body:
        raise RuntimeError(f"{case.name} on {target.server.name}: {status} {body[:300]!r}")


def bench_case(
    case: Case, servers: Servers, args: argparse.Namespace, workdir: Path
) -> tuple[Side, Side]:
    body = workdir / f"{case.name}.json"
    body.write_bytes(case.body)
    pair = targets(case, servers)
    sides = (Side(), Side())
    counts = [max(1, int(n * args.scale)) for n in case.requests]
    for target, count in zip(pair, counts, strict=True):
        check_reply(case, target)
        run_load(load_command(case, target, max(1, count // 5), args.concurrency, body), 1)
    for round_ in range(args.rounds):
        order = (0, 1) if round_ % 2 == 0 else (1, 0)
        for index in order:
            measure(case, pair[index], counts[index], args.concurrency, body, sides[index])
    host, ref = sides
    print(
        f"  {case.name:<12} agenthost {host.cpu_us:>8.0f} µs  {case.reference:<5} "
        f"{ref.cpu_us:>8.0f} µs  {host.cpu_us / max(ref.cpu_us, 1e-9):>5.2f}x",
        flush=True,
    )
    return sides


# --- report --------------------------------------------------------------------------------

REFERENCES = {
    "bare": "bare FastAPI",
    "mcp": "MCP SDK server",
    "a2a": "a2a-sdk server",
    "acp": "acp-sdk server",
}


def _spread(host: Side, ref: Side) -> str:
    ratios = sorted(h / r for h, r in zip(host.per_round, ref.per_round, strict=False) if r)
    return f"{ratios[0]:.2f}-{ratios[-1]:.2f}" if ratios else ""


def report(results: dict[str, tuple[Side, Side]], servers: Servers) -> str:
    columns = f"{'ratio':>6} {'per round':>10} {'goal':>9} fail"
    head = f"{'what':<28} {'agenthost':>10} {'reference':>10} {'':<15} {columns}"
    lines = [head, "-" * len(head)]
    by_name = {case.name: case for case in CASES}
    for name, (host, ref) in results.items():
        case = by_name[name]
        ratio = host.cpu_us / ref.cpu_us if ref.cpu_us else 0.0
        lines.append(
            f"{case.label:<28} {host.cpu_us:>7.0f} µs {ref.cpu_us:>7.0f} µs "
            f"{REFERENCES[case.reference]:<15} {ratio:>5.2f}x {_spread(host, ref):>10} "
            f"{case.goal:>9} {host.failures + ref.failures}"
        )
    if "sse" in results and "sse-long" in results:
        chunks = len(LONG_PROMPT.split()) - len(PROMPT.split())
        (short_h, short_r), (long_h, long_r) = results["sse"], results["sse-long"]
        per_h = (long_h.cpu_us - short_h.cpu_us) / chunks
        per_r = (long_r.cpu_us - short_r.cpu_us) / chunks
        lines.append(
            f"{'/v1 SSE, per streamed chunk':<28} {per_h:>7.1f} µs {per_r:>7.1f} µs "
            f"{'StreamingResp.':<15} {per_h / per_r if per_r else 0:>5.2f}x {'':>10} "
            f"{'<= 15 µs':>9}"
        )
    started = f"{servers.started_in:>8.2f} s {servers.started_cpu:>7.2f} s CPU"
    lines.append(f"{'start-up to /readyz':<28} {started} {'':<25} {'<= 1.5 s':>9}")
    rss = f"{servers.idle_rss_mib:>6.0f} MiB"
    lines.append(f"{'idle RSS after start-up':<28} {rss} {'':<37} {'<= 120 MiB':>9}")
    wall, cpu, rss_openai = servers.openai_only
    started = f"{wall:>8.2f} s {cpu:>7.2f} s CPU, {rss_openai:.0f} MiB"
    lines.append(f"{'start-up, /v1 alone':<28} {started} {'':<15} {'<= 1.5 s':>9}")
    if not bytecode_compiled():
        lines.append(
            "(no bytecode in the venv: start-up includes compiling every module; make install)"
        )
    return "\n".join(lines)


def bytecode_compiled() -> bool:
    """Whether the venv's packages have their ``.pyc`` (``uv sync`` writes none by default)."""
    for name in ("fastapi", "mcp.types", "a2a.types", "acp_sdk"):
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        if origin is None or not Path(importlib.util.cache_from_source(origin)).exists():
            return False
    return True


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="phases per server and case")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every request count")
    parser.add_argument("--concurrency", type=int, default=16)
    names = ",".join(case.name for case in CASES)
    parser.add_argument("--only", default=names, help=f"comma-separated cases ({names})")
    args = parser.parse_args(argv)
    args.only = [name for name in args.only.split(",") if name]
    unknown = set(args.only) - {case.name for case in CASES}
    if unknown:
        parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cases = [case for case in CASES if case.name in args.only]
    print(
        f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; {os.cpu_count()} CPUs; load average "
        f"{os.getloadavg()[0]:.1f}; asyncio/grpc clients c={args.concurrency}; "
        f"{args.rounds} rounds, scale {args.scale}"
    )
    results: dict[str, tuple[Side, Side]] = {}
    with tempfile.TemporaryDirectory(prefix="agenthost-protocols-") as tmp:
        try:
            with running(Path(tmp), {case.reference for case in cases}) as servers:
                print(
                    f"  agenthost ready in {servers.started_in:.2f} s "
                    f"({servers.started_cpu:.2f} s CPU), "
                    f"idle RSS {servers.idle_rss_mib:.0f} MiB",
                    flush=True,
                )
                for case in cases:
                    results[case.name] = bench_case(case, servers, args, Path(tmp))
            servers.openai_only = start_up(Path(tmp), "openai")
        except KeyboardInterrupt:
            print("interrupted; servers stopped", file=sys.stderr)
            return 130
    print()
    print(report(results, servers))
    failures = sum(side.failures for pair in results.values() for side in pair)
    if failures:
        print(f"\n{failures} failed requests", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    os.chdir(REPO)
    sys.exit(main())
