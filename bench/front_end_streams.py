"""The front-end streams beside /v1's: server CPU per streamed chunk, in one run.

Starts ``agenthost serve`` with one ``echo`` agent and streams the same answer
over ``/v1/chat/completions`` (SSE), the AI SDK UI message stream
(``/ai-sdk/echo``) and AG-UI (``/ag-ui/echo``, a new thread each request),
once with a 12-word prompt and once with a 96-word one (the echo model streams
a chunk per word), alternating the order round by round. It reads the
server's own CPU time from ``/proc`` around each batch and prints CPU per
request, CPU per streamed chunk (the long prompt's cost less the short one's,
over the 84 extra chunks) and each protocol's ratio to /v1.

    .venv/bin/python bench/front_end_streams.py [--rounds 2] [--requests 200]

The client is this process (one keep-alive connection, requests in turn): only
the server's CPU is measured. ~1 minute.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_overhead import (
    HOST,
    REPO,
    agenthost_command,
    cpu_times,
    free_port,
    start_server,
    stop_server,
)
from protocols import CONFIG, LONG_PROMPT, PROMPT, wait_until

EXTRA_CHUNKS = len(LONG_PROMPT.split()) - len(PROMPT.split())


def _v1(prompt: str) -> dict[str, object]:
    message = {"role": "user", "content": prompt}
    return {"model": "echo", "messages": [message], "stream": True}


def _ai_sdk(prompt: str) -> dict[str, object]:
    message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": prompt}]}
    return {"id": uuid.uuid4().hex, "messages": [message], "trigger": "submit-message"}


def _ag_ui(prompt: str) -> dict[str, object]:
    return {
        "threadId": uuid.uuid4().hex,  # a new thread: the echo would repeat a kept one
        "runId": uuid.uuid4().hex,
        "state": None,
        "messages": [{"id": "u1", "role": "user", "content": prompt}],
        "tools": [],
        "context": [],
        "forwardedProps": None,
    }


@dataclass(frozen=True)
class Stream:
    name: str
    path: str
    body: Callable[[str], dict[str, object]]
    marker: bytes  # every good reply ends with it


STREAMS = (
    Stream("/v1 SSE", "/v1/chat/completions", _v1, b"data: [DONE]"),
    Stream("AI SDK", "/ai-sdk/echo", _ai_sdk, b"data: [DONE]"),
    Stream("AG-UI", "/ag-ui/echo", _ag_ui, b"RUN_FINISHED"),
)


@dataclass
class Tally:
    requests: int = 0
    cpu: float = 0.0
    failures: int = 0
    per_round: list[float] = field(default_factory=list)

    @property
    def cpu_us(self) -> float:
        return self.cpu / self.requests * 1e6 if self.requests else 0.0


def send(connection: http.client.HTTPConnection, stream: Stream, prompt: str) -> bool:
    body = json.dumps(stream.body(prompt)).encode()
    connection.request("POST", stream.path, body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    reply = response.read()
    return response.status == 200 and stream.marker in reply


def batch(port: int, pid: int, stream: Stream, prompt: str, count: int, tally: Tally) -> None:
    connection = http.client.HTTPConnection(HOST, port, timeout=30.0)
    try:
        before = cpu_times(pid)
        good = sum(send(connection, stream, prompt) for _ in range(count))
        used = cpu_times(pid).since(before).total
    finally:
        connection.close()
    tally.requests += good
    tally.failures += count - good
    tally.cpu += used
    if good:
        tally.per_round.append(used / good * 1e6)


def report(results: dict[tuple[str, str], Tally]) -> str:
    head = f"{'stream':<10} {'12 words':>10} {'96 words':>10} {'per chunk':>10} {'vs /v1':>7} fail"
    lines = [head, "-" * len(head)]
    base = None
    for stream in STREAMS:
        short, long = results[(stream.name, "short")], results[(stream.name, "long")]
        chunk = (long.cpu_us - short.cpu_us) / EXTRA_CHUNKS
        base = chunk if base is None else base
        lines.append(
            f"{stream.name:<10} {short.cpu_us:>7.0f} µs {long.cpu_us:>7.0f} µs "
            f"{chunk:>7.1f} µs {chunk / base if base else 0:>6.2f}x "
            f"{short.failures + long.failures}"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="batches per stream and prompt")
    parser.add_argument("--requests", type=int, default=200, help="requests per batch")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    print(
        f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; {os.cpu_count()} CPUs; load average "
        f"{os.getloadavg()[0]:.1f}; {args.rounds} rounds of {args.requests} requests"
    )
    results = {(s.name, size): Tally() for s in STREAMS for size in ("short", "long")}
    with tempfile.TemporaryDirectory(prefix="agenthost-front-end-") as tmp:
        config = Path(tmp) / "agents.yaml"
        config.write_text(CONFIG)
        server = start_server("agenthost", agenthost_command(config, free_port()), Path(tmp), {})
        try:
            wait_until(server, lambda: _ready(server.port))
            pid = server.process.pid
            for stream in STREAMS:  # warm-up: imports, first requests
                for prompt in (PROMPT, LONG_PROMPT):
                    batch(server.port, pid, stream, prompt, 20, Tally())
            for round_ in range(args.rounds):
                order = STREAMS if round_ % 2 == 0 else STREAMS[::-1]
                for stream in order:
                    for size, prompt in (("short", PROMPT), ("long", LONG_PROMPT)):
                        tally = results[(stream.name, size)]
                        batch(server.port, pid, stream, prompt, args.requests, tally)
                print(f"  round {round_ + 1} done", flush=True)
        finally:
            stop_server(server)
    print()
    print(report(results))
    failures = sum(t.failures for t in results.values())
    if failures:
        print(f"\n{failures} failed requests", file=sys.stderr)
    return 1 if failures else 0


def _ready(port: int) -> bool:
    connection = http.client.HTTPConnection(HOST, port, timeout=2.0)
    try:
        connection.request("GET", "/readyz")
        response = connection.getresponse()
        response.read()
        return response.status == 200
    finally:
        connection.close()


if __name__ == "__main__":
    os.chdir(REPO)
    sys.exit(main())
