"""What metrics and traces cost: CPU per request of ``agenthost serve`` three ways.

The same echo agent, side by side in one run (rounds alternate the order):
``off`` (``AGENTHOST_METRICS=false``), ``metrics`` (the default) and
``tracing`` (metrics, and every request traced: ``OTEL_TRACES_SAMPLER=always_on``,
OTLP/HTTP to ``bench/otlp_sink.py``, the exporter's thread counted in the
server's CPU). The machinery (load, CPU accounting) is ``openai_overhead.py``'s.

    .venv/bin/python bench/observability_overhead.py [--requests N] [--concurrency C]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* from the repository

from bench.openai_overhead import (
    CONFIG,
    DEFAULT_PROMPT,
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
    totals,
    wait_ready,
)

VARIANTS = ("off", "metrics", "tracing")


def benchmark(args: argparse.Namespace, workdir: Path) -> list[Sample]:
    loadgen = LoadGen(args.client, args.concurrency, 1, workdir / "post.lua")
    loadgen.script.write_text(WRK_SCRIPT)
    config = workdir / "agents.yaml"
    config.write_text(CONFIG)
    bodies = {stream: workdir / f"body-{stream}.json" for stream in (False, True)}
    for stream, path in bodies.items():
        path.write_bytes(request_body(args.prompt, stream))
    budget = {False: args.requests, True: args.stream_requests}
    sink_port = free_port()
    uvicorn = [sys.executable, "-m", "uvicorn", "bench.otlp_sink:app", "--port", str(sink_port)]
    sink = start_server("sink", [*uvicorn, "--log-level", "warning"], workdir, {})
    env = {
        "off": {"AGENTHOST_METRICS": "false"},
        "metrics": {},
        "tracing": {
            "OTEL_TRACES_EXPORTER": "otlp",
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{sink_port}",
            "OTEL_TRACES_SAMPLER": "always_on",
        },
    }
    servers: list[Server] = []
    samples: list[Sample] = []
    try:
        for name in VARIANTS:
            command = agenthost_command(config, free_port())
            servers.append(start_server(name, command, workdir, env[name]))
        for server in servers:
            wait_ready(server, bodies[False].read_bytes(), timeout=120)
            for stream, body in bodies.items():
                run_load(loadgen, server.port, body, args.warmup, MARKERS[stream])
        for stream in (False, True):
            for round_, server in rounds(servers, args.rounds):
                sample = measure(server, loadgen, bodies[stream], budget[stream], stream, round_)
                samples.append(sample)
                cpu = sample.cpu.total / max(sample.requests, 1) * 1e6
                path = "streamed" if stream else "non-streamed"
                print(f"  round {round_} {path:<12} {server.name:<8} {cpu:>7.0f} µs CPU/req")
    finally:
        for server in [*servers, sink]:
            stop_server(server)
    return samples


def report(samples: Sequence[Sample]) -> str:
    lines = [f"{'path':<13} {'variant':<8} {'requests':>8} {'CPU µs/req':>11} {'vs off':>7}"]
    for stream in (False, True):
        path = "streamed" if stream else "non-streamed"
        base = totals(samples, "off", stream).cpu_us
        for name in VARIANTS:
            total = totals(samples, name, stream)
            ratio = f"{(total.cpu_us / base - 1) * 100:+6.1f}%" if base else ""
            lines.append(f"{path:<13} {name:<8} {total.requests:>8} {total.cpu_us:>11.0f} {ratio}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="non-streamed, per phase")
    parser.add_argument("--stream-requests", type=int, default=1000, help="streamed, per phase")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--client", choices=["wrk", "asyncio"], default="asyncio")
    parser.add_argument("--prompt", default=DEFAULT_PROMPT)
    args = parser.parse_args(argv)
    started = f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"
    print(f"{started}; load: {args.client} c={args.concurrency}; {args.rounds} rounds")
    with tempfile.TemporaryDirectory(prefix="agenthost-bench-") as tmp:
        samples = benchmark(args, Path(tmp))
    print()
    print(report(samples))
    return 1 if any(sample.failures for sample in samples) else 0


if __name__ == "__main__":
    sys.exit(main())
