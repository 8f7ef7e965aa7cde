"""Throughput of ``agenthost serve --workers 2`` against one worker, side by side.

Both servers serve the ``echo`` agent's non-streamed chat completions with
their sessions on one real Redis (a worker count above one needs it; the
single worker gets the same store so only the worker count differs). Rounds
alternate (ABBA...) under the same bounded load; the run prints each server's
requests per second, CPU per request (the whole process tree), and the ratio.

    .venv/bin/python bench/workers.py                  # ~1 min
    .venv/bin/python bench/workers.py --requests 20000 --concurrency 64

The load generator runs on the same machine: on 2 cores it takes CPU the
workers would use, so the ratio here is below what 2 workers reach with the
client elsewhere; the CPU-per-request column shows whether a worker costs more.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from bench.openai_overhead import (
    CONFIG,
    MARKERS,
    WRK_SCRIPT,
    LoadGen,
    Sample,
    Server,
    agenthost_command,
    free_port,
    measure,
    request_body,
    rounds,
    run_load,
    start_server,
    stop_server,
    wait_ready,
)


@contextlib.contextmanager
def redis(workdir: Path) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install -y redis-server)")
    port = free_port()
    command = [
        binary,
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--dir",
        str(workdir),
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextlib.contextmanager
def servers(workdir: Path, counts: Sequence[int]) -> Iterator[list[Server]]:
    config = workdir / "agents.yaml"
    config.write_text(CONFIG)
    started: list[Server] = []
    with redis(workdir) as url:
        env = {"AGENTHOST_SESSION_STORE": url, "AGENTHOST_ADAPTERS": "openai"}
        try:
            for count in counts:
                command = [*agenthost_command(config, free_port()), "--workers", str(count)]
                started.append(start_server(f"{count} worker(s)", command, workdir, env))
            yield started
        finally:
            for server in started:
                stop_server(server)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=6000, help="per round and server")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--client", choices=["wrk", "asyncio"], default=None)
    args = parser.parse_args(argv)
    client = args.client or ("wrk" if shutil.which("wrk") else "asyncio")
    print(
        f"{os.cpu_count()} CPUs; load: {client} c={args.concurrency}; "
        f"{args.requests} non-streamed requests a round, {args.rounds} rounds"
    )
    samples: list[Sample] = []
    with tempfile.TemporaryDirectory(prefix="agenthost-bench-") as tmp:
        workdir = Path(tmp)
        loadgen = LoadGen(client, args.concurrency, 1, workdir / "post.lua")
        loadgen.script.write_text(WRK_SCRIPT)
        body = workdir / "body.json"
        body.write_bytes(request_body("Hello there, how are you today?", stream=False))
        with servers(workdir, (1, 2)) as started:
            for server in started:
                wait_ready(server, body.read_bytes(), timeout=180)
                run_load(loadgen, server.port, body, 1000, MARKERS[False])  # warm-up
            for round_, server in rounds(started, args.rounds):
                sample = measure(server, loadgen, body, args.requests, False, round_)
                samples.append(sample)
                print(
                    f"  round {round_} {server.name:<12} {sample.requests / sample.elapsed:>7.0f}"
                    f" req/s {sample.cpu.total / max(sample.requests, 1) * 1e6:>6.0f} µs CPU/req",
                    flush=True,
                )
    rate = {}
    for name in ("1 worker(s)", "2 worker(s)"):
        mine = [s for s in samples if s.server == name]
        requests = sum(s.requests for s in mine)
        rate[name] = requests / sum(s.elapsed for s in mine)
        cpu = sum(s.cpu.total for s in mine) / requests * 1e6
        print(f"{name:<12} {rate[name]:>7.0f} req/s  {cpu:>6.0f} µs CPU/req")
    print(f"2 workers / 1: {rate['2 worker(s)'] / rate['1 worker(s)']:.2f}x the throughput")
    failures = sum(s.failures for s in samples)
    if failures:
        print(f"{failures} failed requests", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
