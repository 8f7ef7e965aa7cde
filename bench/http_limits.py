"""The chosen HTTP configuration against uvicorn's defaults and h11: cost and protection.

Serves the same ``echo`` agent three ways (``bench/serve_variant.py``):
uvicorn's default httptools protocol with no limits (before), agenthost's
``LimitedHTTPProtocol`` (what ``agenthost serve`` runs) and uvicorn's h11
protocol with its incomplete-event limit. Then, side by side in one run:

1. CPU per request for non-streamed chat completions (same bounded load,
   rounds alternating ABC/CBA so drift hits all), as ratios to the default;
2. an oversized head: a client sends up to 50 MB of one header in 64 KiB
   writes; how many bytes the server took before answering or closing, how
   long that took, and the slowest ``/healthz`` meanwhile (from another
   connection).

    .venv/bin/python bench/http_limits.py [--requests N] [--rounds R]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from openai_overhead import (
    CONFIG,
    HOST,
    MARKERS,
    REPO,
    WRK_SCRIPT,
    LoadGen,
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

VARIANTS = ("uvicorn", "agenthost", "h11")
HEAD_BUDGET = 50 * 1024 * 1024


def oversized_head(port: int) -> tuple[int, float, float, str]:
    """(bytes accepted, seconds until the server answered or closed, worst /healthz, answer)."""
    worst = 0.0
    done = threading.Event()

    def probe() -> None:
        nonlocal worst
        with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=30) as client:
            while True:  # at least once, however fast the oversized client is dealt with
                started = time.perf_counter()
                client.get("/healthz")
                worst = max(worst, time.perf_counter() - started)
                if done.is_set():
                    return
                time.sleep(0.05)

    prober = threading.Thread(target=probe)
    prober.start()
    sent, answer = 0, ""
    started = time.perf_counter()
    try:
        with socket.create_connection((HOST, port), timeout=60) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ")
            chunk = b"a" * 65536
            try:
                while sent < HEAD_BUDGET:
                    sock.sendall(chunk)
                    sent += len(chunk)
                sock.sendall(b"\r\n\r\n")
            except OSError:
                pass
            try:
                answer = sock.recv(64).split(b"\r\n", 1)[0].decode(errors="replace")
            except OSError:
                answer = "(connection reset)"
    finally:
        elapsed = time.perf_counter() - started
        done.set()
        prober.join()
    return sent, elapsed, worst, answer or "(closed, no answer)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    kind = "wrk" if shutil.which("wrk") else "asyncio"
    with tempfile.TemporaryDirectory(prefix="agenthost-http-") as tmp:
        workdir = Path(tmp)
        config = workdir / "agents.yaml"
        config.write_text(CONFIG)
        body = workdir / "body.json"
        body.write_bytes(request_body("Say hello to the whole team, please.", stream=False))
        loadgen = LoadGen(kind, args.concurrency, 1, workdir / "post.lua")
        loadgen.script.write_text(WRK_SCRIPT)
        servers = []
        try:
            for name in VARIANTS:
                script = str(REPO / "bench" / "serve_variant.py")
                command = [sys.executable, script, name, str(config), "--port", str(free_port())]
                servers.append(start_server(name, command, workdir, {}))
            for server in servers:
                wait_ready(server, body.read_bytes())
                run_load(loadgen, server.port, body, 500, MARKERS[False])
            samples = [
                measure(server, loadgen, body, args.requests, False, round_)
                for round_, server in rounds(servers, args.rounds)
            ]
            heads = {server.name: oversized_head(server.port) for server in servers}
        finally:
            for server in servers:
                stop_server(server)
    base = totals(samples, "uvicorn", False)
    print(f"load: {kind}, c={args.concurrency}, {args.requests} requests x {args.rounds} rounds")
    print(f"{'variant':<10} {'req/s':>7} {'CPU µs/req':>11} {'ratio':>6}   oversized head")
    for name in VARIANTS:
        total = totals(samples, name, False)
        sent, seconds, worst, answer = heads[name]
        print(
            f"{name:<10} {total.rps:>7.0f} {total.cpu_us:>11.0f} "
            f"{total.cpu_us / base.cpu_us:>5.2f}x   "
            f"took {sent / 1024:,.0f} KiB in {seconds:.2f} s, "
            f"answered {answer!r}; worst /healthz meanwhile {worst * 1000:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
