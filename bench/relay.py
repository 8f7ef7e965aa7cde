"""Relaying an upstream model: CPU per upstream chunk and per non-streamed call.

Starts, as processes on 127.0.0.1:

- a lean fake OpenAI-compatible upstream (this file's ``upstream`` role: raw
  asyncio + uvloop, no framework), which answers ``/v1/chat/completions``
  for model ``sN`` with N content chunks spread over ``--duration`` seconds
  (then a finish chunk, a usage chunk and ``[DONE]``), or, not streamed, one
  ``chat.completion`` at once;
- ``agenthost serve`` with agents ``relay1`` (``openai:s1``) and ``relayN``
  (``openai:sN``) pointed at it;
- with ``--litellm PYTHON`` (a venv's python with ``litellm[proxy]``),
  LiteLLM's proxy with the same two models pointed at the same upstream.

Then, each phase measuring the server's own CPU from ``/proc``:

1. **Streams**: ``--streams`` concurrent streams (one connection each, this
   file's ``client`` role in its own process) of ``relayN`` and then of
   ``relay1``, on ``/v1/chat/completions`` and on A2A ``message:stream``.
   Per upstream chunk = (CPU of the N-chunk phase - CPU of the 1-chunk phase)
   / (streams x (N - 1)). Completion time of each stream: p50 / p99 / max.
2. **Non-streamed**: ``--requests`` calls of ``relay1`` at ``--concurrency``
   on ``/v1`` (and LiteLLM's proxy): CPU per request and req/s, rounds
   alternating the order.

    .venv/bin/python bench/relay.py [--streams 1000] [--chunks 20] [--duration 1]
        [--requests 2000] [--litellm /tmp/venv/bin/python] [--warm-pool]
        [--agenthost OTHER/.venv/bin/agenthost] [--profile DIR]

``relay.py provider`` measures the ``openai`` provider alone (no app), in the
process of whichever python runs it: CPU per stream, per chunk, per call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_overhead import (
    HOST,
    Server,
    agenthost_command,
    cpu_times,
    free_port,
    start_server,
    stop_server,
)

with contextlib.suppress(ImportError):
    import uvloop

PROMPT = "Tell me a story about a relay."
LITELLM_KEY = "sk-bench-relay-0123456789abcdef"
CONFIG = """\
agents:
  - name: relay1
    description: Relays to a one-chunk upstream.
    model: openai:s1
    model_settings: {{base_url: "http://{host}:{port}/v1", max_retries: 0}}
  - name: relayN
    description: Relays to an N-chunk upstream.
    model: openai:s{chunks}
    model_settings: {{base_url: "http://{host}:{port}/v1", max_retries: 0}}
"""
LITELLM_CONFIG = """\
model_list:
  - model_name: relay1
    litellm_params: {{model: openai/s1, api_base: "http://{host}:{port}/v1", api_key: unused}}
  - model_name: relayN
    litellm_params:
      {{model: openai/s{chunks}, api_base: "http://{host}:{port}/v1", api_key: unused}}
litellm_settings:
  drop_params: true
"""


# --- the fake upstream ---------------------------------------------------------------------


def _chunk(delta: dict[str, object], finish: str | None = None, usage: bool = False) -> bytes:
    event: dict[str, object] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "s",
        "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage:
        event["usage"] = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    data = b"data: " + orjson.dumps(event) + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


_WORD = _chunk({"content": "word "})
_FIRST = _chunk({"role": "assistant", "content": "word "})
_TAIL = (
    _chunk({}, finish="stop")
    + _chunk({}, usage=True)
    + b"%x\r\ndata: [DONE]\n\n\r\n0\r\n\r\n" % len(b"data: [DONE]\n\n")
)
_STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
)


def _completion(words: int) -> bytes:
    body = orjson.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "s",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "word " * words},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": words, "total_tokens": 7 + words},
        }
    )
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
    return head % len(body) + body


async def _serve_connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, duration: float
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            request = orjson.loads(await reader.readexactly(length)) if length else {}
            chunks = int(str(request.get("model", "s1"))[1:] or 1)
            if not request.get("stream"):
                writer.write(_completion(chunks))
                continue
            writer.write(_STREAM_HEAD + _FIRST)
            pause = duration / chunks
            for _ in range(chunks - 1):
                await asyncio.sleep(pause)
                writer.write(_WORD)
            writer.write(_TAIL)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _upstream(port: int, duration: float) -> None:
    server = await asyncio.start_server(
        lambda r, w: _serve_connection(r, w, duration), HOST, port, backlog=4096, limit=1 << 20
    )
    async with server:
        await server.serve_forever()


# --- the client ----------------------------------------------------------------------------


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    lower = head.lower()
    if b"transfer-encoding: chunked" in lower:
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return status, b"".join(parts)
            parts.append((await reader.readexactly(size + 2))[:-2])
    start = lower.index(b"content-length:") + 15
    length = int(lower[start : lower.index(b"\r\n", start)])
    return status, await reader.readexactly(length)


@dataclass
class Tally:
    budget: int
    sent: int = 0
    bad: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)


async def _client_connection(
    port: int, request: bytes, marker: bytes, tally: Tally, start: asyncio.Event
) -> None:
    try:
        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
    except OSError:
        tally.errors += 1
        return
    await start.wait()
    try:
        while tally.sent < tally.budget:
            tally.sent += 1
            began = time.perf_counter()
            writer.write(request)
            status, body = await _read_response(reader)
            tally.latencies.append(time.perf_counter() - began)
            tally.bad += int(status != 200 or marker not in body)
    except (OSError, ValueError, asyncio.IncompleteReadError):
        tally.errors += 1
    finally:
        writer.close()


async def _client(args: argparse.Namespace) -> dict[str, object]:
    body = args.body.encode()
    extra = "".join(f"{h}\r\n" for h in args.header)
    request = (
        f"POST {args.path} HTTP/1.1\r\nHost: {HOST}:{args.port}\r\n{extra}"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    tally, start = Tally(args.requests), asyncio.Event()
    tasks = [
        asyncio.create_task(
            _client_connection(args.port, request, args.marker.encode(), tally, start)
        )
        for _ in range(args.concurrency)
    ]
    await asyncio.sleep(0.5)  # every connection open before the first request
    began = time.perf_counter()
    start.set()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - began
    return {
        "elapsed": elapsed,
        "bad": tally.bad,
        "errors": tally.errors,
        "latencies": tally.latencies,
    }


# --- the provider alone ---------------------------------------------------------------------


async def _provider(args: argparse.Namespace) -> dict[str, float]:
    """CPU of this process per stream / chunk / call of ``OpenAIModel`` alone (no app).

    Run by whichever python is given (another checkout's venv measures its
    provider with this same code): ``--requests`` streams of ``sN`` and of
    ``s1`` at ``--concurrency``, then as many non-streamed calls, each phase
    after an unmeasured one like it (connections open, caches warm).
    """
    from agenthost.agents import Message
    from agenthost.agents.models.base import ModelRequest
    from agenthost.agents.models.openai import OpenAIModel
    from agenthost.agents.options import ModelSettings

    base = f"http://{HOST}:{args.port}/v1"
    request = ModelRequest(messages=(Message.user(PROMPT),), settings=ModelSettings())
    models = {
        n: OpenAIModel(f"s{n}", base_url=base, api_key="k", max_retries=0) for n in (1, args.chunks)
    }

    async def stream(n: int) -> None:
        async for _ in models[n].stream(request):
            pass

    async def plain(n: int) -> None:
        await models[n].request(request)

    async def phase(call: object, n: int) -> float:
        left = args.requests

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await call(n)  # type: ignore[operator]

        began = time.process_time()
        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        return time.process_time() - began

    cpu: dict[str, float] = {}
    for name, call, n in (("N", stream, args.chunks), ("1", stream, 1), ("plain", plain, 1)):
        await phase(call, n)  # warm
        cpu[name] = min([await phase(call, n) for _ in range(args.rounds)])
    for model in models.values():
        await model.aclose()
    per = args.requests
    return {
        "per_stream_us": cpu["1"] / per * 1e6,
        "per_chunk_us": (cpu["N"] - cpu["1"]) / (per * (args.chunks - 1)) * 1e6,
        "per_call_us": cpu["plain"] / per * 1e6,
    }


# --- the driver ----------------------------------------------------------------------------


def _bodies(chunks: int) -> dict[str, tuple[str, str, str, tuple[str, ...]]]:
    """Per surface: (path template, body template, marker, headers); {agent} in them."""
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": PROMPT}]}
    chat = {"model": "{agent}", "messages": [{"role": "user", "content": PROMPT}]}
    return {
        "v1": (
            "/v1/chat/completions",
            json.dumps({**chat, "stream": True}),
            "data: [DONE]",
            (),
        ),
        "a2a": (
            "/a2a/{agent}/message:stream",
            json.dumps({"message": message}),
            "TASK_STATE_COMPLETED",
            ("A2A-Version: 1.0",),
        ),
        "a2a-rpc": (
            "/a2a/{agent}",
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendStreamingMessage",
                    "params": {"message": message},
                }
            ),
            "TASK_STATE_COMPLETED",
            ("A2A-Version: 1.0",),
        ),
        "v1-plain": ("/v1/chat/completions", json.dumps(chat), '"finish_reason":"stop"', ()),
        # A streamed Response, and the same as a background one (its run on the run log,
        # the stream a view following it): the difference is what the log costs.
        "responses": (
            "/v1/responses",
            json.dumps({"model": "{agent}", "input": PROMPT, "stream": True}),
            "response.completed",
            (),
        ),
        "responses-bg": (
            "/v1/responses",
            json.dumps({"model": "{agent}", "input": PROMPT, "stream": True, "background": True}),
            "response.completed",
            (),
        ),
    }


def run_client(
    port: int,
    path: str,
    body: str,
    marker: str,
    headers: tuple[str, ...],
    requests: int,
    concurrency: int,
) -> dict[str, object]:
    command = [sys.executable, __file__, "client", "--port", str(port), "--path", path]
    command += ["--body", body, "--marker", marker, "--requests", str(requests)]
    command += ["--concurrency", str(concurrency)]
    for header in headers:
        command += ["--header", header]
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


@dataclass
class Phase:
    server: str
    what: str
    requests: int
    cpu: float
    elapsed: float
    failures: int
    latencies: list[float]
    full_gcs: int | None = None  # the server's full (generation 2) collections meanwhile

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


@contextlib.contextmanager
def profiled(pid: int, out: Path | None) -> Iterator[None]:
    """py-spy records ``pid`` into ``out`` (raw, 200 Hz) meanwhile; nothing when None."""
    if out is None:
        yield
        return
    spy = os.environ.get("PY_SPY", "py-spy")
    command = [spy, "record", "-r", "200", "--format", "raw", "-o", str(out), "--pid", str(pid)]
    recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)  # attached before the phase starts
        yield
    finally:
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=60)


def measure(
    server: Server,
    what: str,
    path: str,
    body: str,
    marker: str,
    headers: tuple[str, ...],
    requests: int,
    concurrency: int,
    profile: Path | None = None,
) -> Phase:
    gcs = full_collections(server)
    with profiled(server.process.pid, profile):
        before = cpu_times(server.process.pid).total
        result = run_client(server.port, path, body, marker, headers, requests, concurrency)
        time.sleep(0.2)
        cpu = cpu_times(server.process.pid).total - before
    after = full_collections(server)
    latencies = list(result["latencies"])  # type: ignore[call-overload]
    failures = int(result["bad"]) + int(result["errors"]) + requests - len(latencies)  # type: ignore[call-overload]
    return Phase(
        server.name,
        what,
        len(latencies),
        cpu,
        float(result["elapsed"]),
        failures,
        latencies,  # type: ignore[arg-type]
        None if gcs is None or after is None else after - gcs,
    )


def full_collections(server: Server) -> int | None:
    """The server's full garbage collections so far, from its ``/metrics``; None without."""
    import http.client

    if server.name != "agenthost":
        return None
    try:
        connection = http.client.HTTPConnection(HOST, server.port, timeout=10)
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith('python_gc_collections_total{generation="2"}'):
            return int(float(line.split()[-1]))
    return None


def wait_ready(server: Server, timeout: float = 600.0) -> None:
    import http.client

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited: {server.log.read_text()[-2000:]}")
        with contextlib.suppress(OSError):
            connection = http.client.HTTPConnection(HOST, server.port, timeout=2)
            connection.request(
                "GET", "/health/liveliness" if server.name == "litellm" else "/readyz"
            )
            if connection.getresponse().status == 200:
                return
        time.sleep(0.3)
    raise RuntimeError(f"{server.name} not ready after {timeout} s")


@contextlib.contextmanager
def servers(args: argparse.Namespace, workdir: Path) -> Iterator[dict[str, Server]]:
    started: dict[str, Server] = {}
    try:
        up_port = free_port()
        command = [sys.executable, __file__, "upstream", "--port", str(up_port)]
        started["upstream"] = start_server(
            "upstream", [*command, "--duration", str(args.duration)], workdir, {}
        )
        config = workdir / "agents.yaml"
        config.write_text(CONFIG.format(host=HOST, port=up_port, chunks=args.chunks))
        env = {
            "AGENTHOST_MAX_REQUESTS_PER_PRINCIPAL": "0",
            "AGENTHOST_MAX_CONNECTIONS_PER_CLIENT": "0",
        }
        command = agenthost_command(config, free_port())
        if args.agenthost:
            command[0] = args.agenthost
        started["agenthost"] = start_server("agenthost", command, workdir, env)
        if args.litellm:
            lite = workdir / "litellm.yaml"
            lite.write_text(LITELLM_CONFIG.format(host=HOST, port=up_port, chunks=args.chunks))
            litellm = Path(args.litellm).parent / "litellm"
            command = [
                str(litellm),
                "--config",
                str(lite),
                "--host",
                HOST,
                "--port",
                str(free_port()),
            ]
            env = {
                "LITELLM_LOG": "ERROR",
                "LITELLM_MASTER_KEY": LITELLM_KEY,  # it refuses to start without one
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch from GitHub at start
            }
            started["litellm"] = start_server("litellm", command, workdir, env)
        for name in ("agenthost", "litellm"):
            if name in started:
                wait_ready(started[name])
        yield started
    finally:
        for server in started.values():
            stop_server(server)


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _total(values: Iterable[int | None]) -> int | None:
    counts = list(values)
    return None if None in counts else sum(c for c in counts if c is not None)


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def benchmark(args: argparse.Namespace, workdir: Path) -> int:
    bodies = _bodies(args.chunks)
    failed = 0
    with servers(args, workdir) as running:
        host = running["agenthost"]
        print(f"load average at start: {_load()}")
        # Warm-up: a few of each kind.
        for surface in ("v1", "a2a", "v1-plain"):
            path, body, marker, headers = bodies[surface]
            measure(
                host,
                "warm",
                path.format(agent="relay1"),
                body.replace("{agent}", "relay1"),
                marker,
                headers,
                50,
                10,
            )
        if args.profile:
            args.profile.mkdir(parents=True, exist_ok=True)
        print(
            f"\nstreams: {args.streams} concurrent, {args.chunks} upstream chunks"
            f" over {args.duration:g} s vs 1 chunk"
        )
        print(
            f"{'surface':8} {'chunks':>6} {'CPU s':>7} {'wall s':>7} {'p50 s':>6}"
            f" {'p99 s':>6} {'max s':>6} {'fail':>5} {'full GCs':>8}"
        )
        for surface in args.surfaces.split(","):
            path, body, marker, headers = bodies[surface]
            phases = {}
            for agent, chunks in (("relayN", args.chunks), ("relay1", 1)):
                if args.warm_pool:  # each agent has its own connections to the upstream
                    body_ = body.replace("{agent}", agent)
                    path_ = path.format(agent=agent)
                    measure(host, "warm", path_, body_, marker, headers, args.streams, args.streams)
                phase = measure(
                    host,
                    surface,
                    path.format(agent=agent),
                    body.replace("{agent}", agent),
                    marker,
                    headers,
                    args.streams,
                    args.streams,
                    args.profile / f"{surface}-{chunks}.txt" if args.profile else None,
                )
                phases[chunks] = phase
                failed += phase.failures
                print(
                    f"{surface:8} {chunks:>6} {phase.cpu:>7.2f} {phase.elapsed:>7.2f}"
                    f" {phase.pct(0.5):>6.2f} {phase.pct(0.99):>6.2f}"
                    f" {max(phase.latencies, default=float('nan')):>6.2f} {phase.failures:>5}"
                    f" {_count(phase.full_gcs):>8}"
                )
            extra = phases[args.chunks].cpu - phases[1].cpu
            per_chunk = extra / (args.streams * (args.chunks - 1)) * 1e6
            per_stream = phases[1].cpu / args.streams * 1e6
            print(
                f"{surface:8} per upstream chunk {per_chunk:.1f} µs (goal <= 60),"
                f" per 1-chunk stream {per_stream:.0f} µs; load {_load()}"
            )
        print(
            f"\nnon-streamed: {args.requests} requests per round at c={args.concurrency},"
            f" {args.rounds} rounds"
        )
        path, body, marker, headers = bodies["v1-plain"]
        # "direct": the same calls straight to the upstream (model s1), the floor that
        # "latency added" is measured from.
        names = ["direct", *(n for n in ("agenthost", "litellm") if n in running)]
        servers_ = {**running, "direct": running["upstream"]}

        def plain(name: str, requests: int, concurrency: int, profile: Path | None) -> Phase:
            return measure(
                servers_[name],
                "plain",
                path,
                body.replace("{agent}", "s1" if name == "direct" else "relay1"),
                marker if name == "agenthost" else '"stop"',
                (f"Authorization: Bearer {LITELLM_KEY}",) if name == "litellm" else headers,
                requests,
                concurrency,
                profile,
            )

        totals: dict[str, list[Phase]] = {n: [] for n in names}
        serial: dict[str, list[Phase]] = {n: [] for n in names}
        for round_ in range(args.rounds):
            order = names if round_ % 2 == 0 else names[::-1]
            for name in order:
                profile = (
                    args.profile / f"plain-{round_}.txt"
                    if args.profile and name == "agenthost"
                    else None
                )
                phase = plain(name, args.requests, args.concurrency, profile)
                failed += phase.failures
                totals[name].append(phase)
                # One call at a time: the latency a call gains through the server, no queueing.
                phase = plain(name, max(args.requests // 4, 100), 1, None)
                failed += phase.failures
                serial[name].append(phase)
        print(
            f"{'server':10} {'requests':>8} {'req/s':>7} {'CPU µs/req':>10} {'p50 ms':>7}"
            f" {'p99 ms':>7} {'fail':>5} {'full GCs':>8}"
        )
        rates = {}
        cpus = {}
        for name, phases_ in totals.items():
            if not phases_:
                continue
            count = sum(p.requests for p in phases_)
            cpu = sum(p.cpu for p in phases_)
            wall = sum(p.elapsed for p in phases_)
            lat = sorted(x for p in phases_ for x in p.latencies)
            rates[name] = count / wall
            cpus[name] = cpu / max(count, 1) * 1e6
            print(
                f"{name:10} {count:>8} {rates[name]:>7.0f} {cpus[name]:>10.0f} "
                f"{lat[len(lat) // 2] * 1e3:>7.1f} {lat[int(len(lat) * 0.99)] * 1e3:>7.1f} "
                f"{sum(p.failures for p in phases_):>5}"
                f" {_count(_total(p.full_gcs for p in phases_)):>8}"
            )
        print(
            "latency added over the direct call (ms), one call at a time and at"
            f" c={args.concurrency}:"
        )
        floor = {
            which: sorted(x for p in phases[names[0]] for x in p.latencies)
            for which, phases in (("c1", serial), ("cN", totals))
        }
        for name in names[1:]:
            row = []
            for which, phases in (("c1", serial), ("cN", totals)):
                lat = sorted(x for p in phases[name] for x in p.latencies)
                base = floor[which]
                for q in (0.5, 0.99):
                    added = lat[int(len(lat) * q)] - base[int(len(base) * q)]
                    row.append(f"{which} p{int(q * 100)} {added * 1e3:+.2f}")
            print(f"  {name:10} " + ", ".join(row))
        if "litellm" in rates:
            print(
                f"agenthost/litellm: throughput {rates['agenthost'] / rates['litellm']:.2f}x"
                " (goal >= 15), "
                f"CPU per request {cpus['agenthost'] / cpus['litellm']:.3f}x"
            )
        print(f"load average at end: {_load()}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="role")
    up = sub.add_parser("upstream")
    up.add_argument("--port", type=int, required=True)
    up.add_argument("--duration", type=float, default=1.0)
    client = sub.add_parser("client")
    client.add_argument("--port", type=int, required=True)
    client.add_argument("--path", required=True)
    client.add_argument("--body", required=True)
    client.add_argument("--marker", default="")
    client.add_argument("--requests", type=int, required=True)
    client.add_argument("--concurrency", type=int, required=True)
    client.add_argument("--header", action="append", default=[])
    provider = sub.add_parser("provider", help="the openai provider alone, in this process")
    provider.add_argument("--port", type=int, help="an upstream role's port (default: start one)")
    provider.add_argument("--requests", type=int, default=500)
    provider.add_argument("--concurrency", type=int, default=50)
    provider.add_argument("--chunks", type=int, default=20)
    provider.add_argument("--rounds", type=int, default=3)
    provider.add_argument(
        "--duration",
        type=float,
        default=0.05,
        help="of each sN stream: its chunks come apart, one per read, as a model's do",
    )
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--duration", type=float, default=1.0)
    parser.add_argument("--surfaces", default="v1,a2a")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--litellm", help="python of a venv with litellm[proxy] installed")
    parser.add_argument("--agenthost", help="the agenthost command to measure (another checkout's)")
    parser.add_argument(
        "--warm-pool",
        action="store_true",
        help="before each stream phase, as many unmeasured streams of its agent, so that it"
        " finds its upstream connections open (else a phase opens up to --streams)",
    )
    parser.add_argument(
        "--profile", type=Path, help="py-spy raw profiles of each stream phase here"
    )
    args = parser.parse_args(argv)
    runner = uvloop.run if "uvloop" in sys.modules else asyncio.run
    if args.role == "upstream":
        runner(_upstream(args.port, args.duration))
        return 0
    if args.role == "provider":
        if args.port:
            print(json.dumps(runner(_provider(args))))
            return 0
        port = free_port()
        command = [sys.executable, __file__, "upstream", "--port", str(port)]
        command += ["--duration", str(args.duration)]
        with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
            upstream = start_server("upstream", command, Path(tmp), {})
            try:
                time.sleep(1.0)
                args.port = port
                print(json.dumps(runner(_provider(args))))
            finally:
                stop_server(upstream)
        return 0
    if args.role == "client":
        print(json.dumps(runner(_client(args))))
        return 0
    print(f"bench/relay.py {datetime.now():%Y-%m-%d %H:%M}")
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
        return benchmark(args, Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
