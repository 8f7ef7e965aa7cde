"""The embedded local model: llama.cpp called directly vs. through agenthost.

Same model file, same llama.cpp parameters, same prompt, greedy decoding and
a fixed number of new tokens, so both sides generate the same text. For each
side it measures load time, time to first token (TTFT) and decode speed
(tokens/s after the first token), alternating the sides round by round, and
prints the ratios (agenthost / direct): the server's overhead.

    .venv/bin/python bench/local_model.py [--rounds N] [--max-tokens T]

"direct" calls ``xllamacpp.Server.handle_chat_completions`` with a streaming
callback in this process; "agenthost" is ``agenthost serve`` in a subprocess
on a free 127.0.0.1 port, read with a raw streaming HTTP client.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
import xllamacpp

from agenthost.agents.models.local import resolve_model_file

REPO = Path(__file__).resolve().parent.parent
SYSTEM = "You are a helpful assistant. Answer briefly and accurately."
PROMPT = "Explain in a few sentences why the sky is blue."
CONFIG = f"""\
agents:
  - name: local
    model: local:smollm2
    model_settings: {{context_size: 4096, parallel: 2, threads: 1}}
    instructions: {SYSTEM}
"""


@dataclass
class Run:
    ttft: float  # seconds from request to first content token
    tokens: int  # completion tokens (from usage)
    decode: float  # seconds from first to last token

    @property
    def tokens_per_second(self) -> float:
        return (self.tokens - 1) / self.decode if self.decode > 0 else float("nan")


def request_body(max_tokens: int) -> dict[str, object]:
    return {
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PROMPT}],
        "temperature": 0,
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def load_direct() -> tuple[object, float]:
    params = xllamacpp.CommonParams()
    params.model.path = str(resolve_model_file("smollm2"))
    params.n_ctx = 4096 * 2
    params.n_parallel = 2
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.verbosity = -1
    params.endpoint_slots = False
    params.api_keys = [secrets.token_urlsafe(16)]
    start = time.perf_counter()
    server = xllamacpp.Server(params)
    return server, time.perf_counter() - start


def run_direct(server: object, max_tokens: int) -> Run:
    marks: list[float] = []
    usage: dict[str, int] = {}

    def on_chunk(chunk: dict[str, object]) -> bool:
        for choice in chunk.get("choices") or []:  # type: ignore[attr-defined]
            if (choice.get("delta") or {}).get("content"):
                marks.append(time.perf_counter())
        if chunk.get("usage"):
            usage.update(chunk["usage"])  # type: ignore[arg-type]
        return False

    start = time.perf_counter()
    server.handle_chat_completions(request_body(max_tokens), on_chunk)  # type: ignore[attr-defined]
    return Run(marks[0] - start, usage["completion_tokens"], marks[-1] - marks[0])


def run_server(url: str, max_tokens: int, client: httpx.Client) -> Run:
    # The agent's instructions are the system message: send only the user's.
    body = {**request_body(max_tokens), "model": "local"}
    body["messages"] = body["messages"][1:]  # type: ignore[index]
    marks: list[float] = []
    tokens = 0
    start = time.perf_counter()
    with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[6:])
            if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                marks.append(time.perf_counter())
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
    return Run(marks[0] - start, tokens, marks[-1] - marks[0])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_agenthost(config: Path) -> tuple[subprocess.Popen[bytes], str, float]:
    """Starts the server; returns it, its URL and seconds until /readyz said ready."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "app",
        "serve",
        "--config",
        str(config),
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO)
    url = f"http://127.0.0.1:{port}"
    while True:
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=1) as response:
                if response.status == 200:
                    return process, url, time.perf_counter() - start
        except OSError:
            pass
        if process.poll() is not None or time.perf_counter() - start > 60:
            process.kill()
            raise RuntimeError("agenthost did not become ready")
        time.sleep(0.02)


def summary(name: str, runs: list[Run]) -> tuple[float, float]:
    ttft = statistics.median(r.ttft for r in runs)
    tps = statistics.median(r.tokens_per_second for r in runs)
    tokens = {r.tokens for r in runs}
    print(f"{name:<10} {ttft * 1000:>9.1f} {tps:>10.1f} {sorted(tokens)!s:>12}")
    return ttft, tps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args()

    direct, direct_load = load_direct()
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "agents.yaml"
        config.write_text(CONFIG)
        process, url, ready = start_agenthost(config)
        try:
            with httpx.Client(timeout=120) as client:
                sides: dict[str, Callable[[], Run]] = {
                    "direct": lambda: run_direct(direct, args.max_tokens),
                    "agenthost": lambda: run_server(url, args.max_tokens, client),
                }
                for run in sides.values():  # warm-up: prompt cache, page cache
                    run()
                runs: dict[str, list[Run]] = {name: [] for name in sides}
                for index in range(args.rounds):
                    order = list(sides) if index % 2 == 0 else list(reversed(sides))
                    for name in order:
                        runs[name].append(sides[name]())
        finally:
            process.terminate()
            process.wait(timeout=30)

    print(
        f"local model bench, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
        f"{args.rounds} rounds, {args.max_tokens} max tokens, temperature 0"
    )
    print(f"load: direct {direct_load:.2f} s; agenthost process start to ready {ready:.2f} s")
    print(f"{'side':<10} {'TTFT ms':>9} {'tokens/s':>10} {'tokens':>12}")
    direct_ttft, direct_tps = summary("direct", runs["direct"])
    host_ttft, host_tps = summary("agenthost", runs["agenthost"])
    print(
        f"ratio agenthost/direct: TTFT {host_ttft / direct_ttft:.2f}x "
        f"(+{(host_ttft - direct_ttft) * 1000:.1f} ms), tokens/s {host_tps / direct_tps:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
