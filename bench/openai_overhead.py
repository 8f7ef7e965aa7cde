"""agenthost's OpenAI chat completions against a bare FastAPI endpoint: CPU per request.

Starts ``agenthost serve`` (one ``echo`` agent) and ``bench/bare_app.py`` on
free 127.0.0.1 ports with the same uvicorn settings, checks that both send
replies of the same size, warms them up, then sends the same bounded load to
each, alternating the servers round by round (ABBA...) so drift hits both.
For every phase it reads the server's own CPU time (utime + stime from
``/proc/<pid>/stat``, children included) and divides by the requests served.

    .venv/bin/python bench/openai_overhead.py [--requests N] [--concurrency C]

The load comes from ``wrk`` (with a Lua script) when it is on PATH, else from
``bench/loadgen.py`` (asyncio, keep-alive); either way in its own process.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

HOST = "127.0.0.1"
PATH = "/v1/chat/completions"
REPO = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
DEFAULT_PROMPT = (
    "Summarise the main points of the quarterly report in three short bullet points for the team."
)
CONFIG = """\
agents:
  - name: echo
    description: Repeats what you say.
    model: echo
"""
# --upstream: the agent relays to a second bare app through the openai provider.
RELAY_CONFIG = """\
agents:
  - name: echo
    description: Relays to the upstream, which echoes.
    model: openai:echo
    model_settings:
      base_url: http://{host}:{port}/v1
      max_retries: 0
"""
# What a complete reply contains, per path (checked on every reply).
MARKERS = {False: '"finish_reason":"stop"', True: "data: [DONE]"}
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

WRK_SCRIPT = """\
-- Written by bench/openai_overhead.py. args: quota per thread, body file, marker.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  quota, marker = tonumber(args[1]), args[3]
  local file = assert(io.open(args[2], "rb"))
  local body = file:read("*a")
  file:close()
  req = wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
  sent, received, bad = 0, 0, 0
  io.stdout:write("BENCH-START\\n")
  io.stdout:flush()
end

function request()
  sent = sent + 1
  return req
end

function response(status, headers, body)
  received = received + 1
  if status ~= 200 or not string.find(body, marker, 1, true) then
    bad = bad + 1
  end
  if received == quota then
    io.stdout:write("BENCH-THREAD-DONE\\n")
    io.stdout:flush()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local sent_, received_, bad_ = 0, 0, 0
  for _, thread in ipairs(threads) do
    sent_ = sent_ + thread:get("sent")
    received_ = received_ + thread:get("received")
    bad_ = bad_ + thread:get("bad")
  end
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.timeout
  io.stdout:write(string.format(
    'BENCH-RESULT {"sent": %d, "received": %d, "bad": %d, "errors": %d}\\n',
    sent_, received_, bad_, errors))
end
"""


# --- servers -------------------------------------------------------------------------------


@dataclass
class Server:
    """A server under test, running as a subprocess."""

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def agenthost_command(config: Path, port: int) -> list[str]:
    """What agenthost's own CLI runs: ``uvicorn.run(app, log_level=..., graceful 30 s)``."""
    local = REPO / ".venv" / "bin" / "agenthost"
    exe = str(local) if local.exists() else shutil.which("agenthost") or "agenthost"
    args = ["serve", "--config", str(config), "--host", HOST, "--port", str(port)]
    return [exe, *args, "--log-level", "warning"]


def bare_command(port: int) -> list[str]:
    """uvicorn with the options agenthost's ``uvicorn.run`` ends up with.

    agenthost passes no ``loop``/``http``/``access_log``: uvicorn's "auto"
    picks uvloop and httptools, and its access log stays on (its INFO records
    are dropped at log level warning). The bare app gets the same.
    """
    uvicorn = ["-m", "uvicorn", "bench.bare_app:app", "--host", HOST, "--port", str(port)]
    options = ["--loop", "uvloop", "--http", "httptools", "--log-level", "warning"]
    return [sys.executable, *uvicorn, *options, "--timeout-graceful-shutdown", "30"]


def start_server(name: str, command: list[str], workdir: Path, env: dict[str, str]) -> Server:
    port = int(command[command.index("--port") + 1])
    log = workdir / f"{name}.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,  # Ctrl-C reaches the driver only; it stops them
        )
    return Server(name, port, process, log)


def stop_server(server: Server) -> None:
    if server.process.poll() is not None:
        return
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@contextlib.contextmanager
def running_servers(workdir: Path, prompt: str, upstream: bool) -> Iterator[list[Server]]:
    """agenthost and the bare app, stopped on the way out whatever happens.

    With ``upstream``, a second bare app (not measured) is the upstream model
    server of agenthost's agent.
    """
    config = workdir / "agents.yaml"
    config.write_text(CONFIG)
    servers: list[Server] = []
    helpers: list[Server] = []
    try:
        if upstream:
            port = free_port()
            env = {"BARE_APP_PROMPT": prompt}
            helpers.append(start_server("upstream", bare_command(port), workdir, env))
            config.write_text(RELAY_CONFIG.format(host=HOST, port=port))
        command = agenthost_command(config, free_port())
        servers.append(start_server("agenthost", command, workdir, {}))
        command = bare_command(free_port())
        servers.append(start_server("bare", command, workdir, {"BARE_APP_PROMPT": prompt}))
        yield servers
    finally:
        for server in [*servers, *helpers]:
            stop_server(server)


# --- talking to a server once ----------------------------------------------------------------


def request_body(prompt: str, stream: bool) -> bytes:
    body: dict[str, object] = {"model": "echo", "messages": [{"role": "user", "content": prompt}]}
    if stream:
        body["stream"] = True
    return json.dumps(body, separators=(",", ":")).encode()


def post_once(port: int, body: bytes, timeout: float = 5.0) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request("POST", PATH, body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def wait_ready(server: Server, body: bytes, timeout: float = 30.0) -> None:
    """Poll with a real request until it is answered with 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            log = server.log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{server.name} exited with {server.process.returncode}:\n{log}")
        with contextlib.suppress(OSError):
            if post_once(server.port, body, timeout=2.0)[0] == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{server.name} not ready after {timeout:.0f} s")


def reply_shape(port: int, prompt: str) -> tuple[int, int, int]:
    """(JSON reply bytes, SSE events, SSE bytes) for the benchmark's prompt."""
    _, completion = post_once(port, request_body(prompt, stream=False))
    _, stream = post_once(port, request_body(prompt, stream=True))
    return len(completion), stream.count(b"data: "), len(stream)


def loaded_libraries(pid: int) -> dict[str, bool]:
    """Whether the server process really mapped uvloop and httptools."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {name: f"/{name}/" in maps for name in ("uvloop", "httptools")}


# --- CPU accounting --------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()  # fields from "state" on


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (uvicorn with workers would have some)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parents[int(entry.name)] = int(_stat_fields(int(entry.name))[1])
    tree, frontier = [pid], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        tree += children
        frontier = children
    return tree


class CpuTimes(NamedTuple):
    """Seconds of CPU a process tree used, in user space and in the kernel."""

    user: float
    system: float

    @property
    def total(self) -> float:
        return self.user + self.system

    def since(self, earlier: CpuTimes) -> CpuTimes:
        return CpuTimes(self.user - earlier.user, self.system - earlier.system)


def cpu_times(pid: int) -> CpuTimes:
    """utime and stime of ``pid`` and its descendants, plus their reaped children's."""
    user = system = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            # utime, stime, cutime, cstime are fields 14-17 (1-based) of /proc/<pid>/stat.
            utime, stime, cutime, cstime = (int(v) for v in _stat_fields(member)[11:15])
            user += utime + cutime
            system += stime + cstime
    return CpuTimes(user / CLOCK_TICKS, system / CLOCK_TICKS)


# --- load generation -------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadGen:
    """How to send ``requests`` POSTs at ``concurrency`` to a port."""

    kind: str  # "wrk" or "asyncio"
    concurrency: int
    threads: int
    script: Path  # the wrk Lua script (unused by asyncio)

    def command(self, port: int, body_file: Path, requests: int, marker: str) -> list[str]:
        if self.kind == "wrk":
            quota = -(-requests // self.threads)
            url = f"http://{HOST}:{port}{PATH}"
            options = [f"-t{self.threads}", f"-c{self.concurrency}", "-d60s", "-T10s"]
            script_args = [str(quota), str(body_file), marker]
            return ["wrk", *options, "-s", str(self.script), url, "--", *script_args]
        return [
            sys.executable,
            str(BENCH / "loadgen.py"),
            *("--port", str(port), "--body", str(body_file), "--marker", marker),
            *("--requests", str(requests), "--concurrency", str(self.concurrency)),
        ]

    @property
    def workers(self) -> int:
        """How many BENCH-THREAD-DONE lines mean the whole budget is spent."""
        return self.threads if self.kind == "wrk" else 1


@dataclass
class LoadResult:
    received: int
    failures: int  # non-200 or incomplete replies, socket errors, requests never answered
    elapsed: float  # seconds from the first request to the last reply


def run_load(
    loadgen: LoadGen, port: int, body_file: Path, requests: int, marker: str
) -> LoadResult:
    """Run the load generator to completion and parse its result line."""
    command = loadgen.command(port, body_file, requests, marker)
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, start_new_session=True
    )
    assert process.stdout is not None
    launched = time.perf_counter()
    start: float | None = None
    end: float | None = None
    finished, result = 0, None
    try:
        for line in process.stdout:
            if line.startswith("BENCH-START") and start is None:
                start = time.perf_counter()
            elif line.startswith("BENCH-THREAD-DONE"):
                finished += 1
                end = time.perf_counter()
                if finished == loadgen.workers and loadgen.kind == "wrk":
                    process.send_signal(signal.SIGINT)  # wrk otherwise sleeps out its -d
            elif line.startswith("BENCH-RESULT"):
                result = json.loads(line.split(" ", 1)[1])
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if result is None:
        raise RuntimeError(f"load generator gave no result (exit {process.returncode})")
    if finished < loadgen.workers or end is None:
        end = time.perf_counter()
    received = int(result["received"])
    short = max(0, requests - received)
    failures = int(result["bad"]) + int(result["errors"]) + short
    return LoadResult(received, failures, end - (start or launched))


# --- measuring -------------------------------------------------------------------------------


@dataclass
class Sample:
    """One measured phase: a server, a path, a bounded load."""

    server: str
    stream: bool
    round: int
    requests: int
    cpu: CpuTimes
    elapsed: float
    failures: int


def measure(
    server: Server, loadgen: LoadGen, body_file: Path, requests: int, stream: bool, round_: int
) -> Sample:
    before = cpu_times(server.process.pid)
    load = run_load(loadgen, server.port, body_file, requests, MARKERS[stream])
    time.sleep(0.05)  # let the server finish replies to abandoned in-flight requests
    cpu = cpu_times(server.process.pid).since(before)
    return Sample(server.name, stream, round_, load.received, cpu, load.elapsed, load.failures)


def rounds(servers: Sequence[Server], count: int) -> Iterator[tuple[int, Server]]:
    """ABBA...: the order flips each round so drift in time affects both servers alike."""
    for round_ in range(count):
        order = servers if round_ % 2 == 0 else list(reversed(servers))
        for server in order:
            yield round_, server


# --- reporting -------------------------------------------------------------------------------


@dataclass
class Totals:
    """The phases of one server on one path, added up."""

    requests: int = 0
    cpu: float = 0.0
    system: float = 0.0
    elapsed: float = 0.0
    failures: int = 0
    per_round_cpu_us: dict[int, float] = field(default_factory=dict)

    def add(self, sample: Sample) -> None:
        self.requests += sample.requests
        self.cpu += sample.cpu.total
        self.system += sample.cpu.system
        self.elapsed += sample.elapsed
        self.failures += sample.failures
        if sample.requests:
            self.per_round_cpu_us[sample.round] = sample.cpu.total / sample.requests * 1e6

    @property
    def rps(self) -> float:
        return self.requests / self.elapsed if self.elapsed else 0.0

    @property
    def cpu_us(self) -> float:
        return self.cpu / self.requests * 1e6 if self.requests else 0.0

    @property
    def system_us(self) -> float:
        return self.system / self.requests * 1e6 if self.requests else 0.0


def totals(samples: Sequence[Sample], server: str, stream: bool) -> Totals:
    result = Totals()
    for sample in samples:
        if sample.server == server and sample.stream == stream:
            result.add(sample)
    return result


def _ratio_line(path: str, host: Totals, bare: Totals) -> str:
    per_round = sorted(
        cpu / bare.per_round_cpu_us[r]
        for r, cpu in host.per_round_cpu_us.items()
        if bare.per_round_cpu_us.get(r)
    )
    spread = f"  per round {per_round[0]:.2f}-{per_round[-1]:.2f}" if per_round else ""
    return (
        f"{path:<13} {'ratio':<10} {'':>8} {host.rps / bare.rps:>7.2f}x "
        f"{host.cpu_us / bare.cpu_us:>10.2f}x {'':>10} {'':>5}   agenthost/bare CPU{spread}"
    )


def report(samples: Sequence[Sample]) -> str:
    """The table: per path and server, then the agenthost/bare ratios."""
    columns = f"{'requests':>8} {'req/s':>8} {'CPU µs/req':>11} {'of it sys':>10} {'fail':>5}"
    head = f"{'path':<13} {'server':<10} {columns}"
    lines = [head, "-" * len(head)]
    for stream in (False, True):
        path = "streamed" if stream else "non-streamed"
        host, bare = totals(samples, "agenthost", stream), totals(samples, "bare", stream)
        for name, total in (("agenthost", host), ("bare", bare)):
            row = (
                f"{total.requests:>8} {total.rps:>8.0f} {total.cpu_us:>11.0f} "
                f"{total.system_us:>10.0f} {total.failures:>5}"
            )
            lines.append(f"{path:<13} {name:<10} {row}")
        if bare.cpu_us and bare.rps:
            lines.append(_ratio_line(path, host, bare))
    return "\n".join(lines)


# --- main ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000, help="non-streamed, per phase")
    parser.add_argument("--stream-requests", type=int, default=1500, help="streamed, per phase")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=4, help="phases per server and path")
    parser.add_argument("--warmup", type=int, default=500, help="unmeasured requests per path")
    parser.add_argument("--client", choices=["auto", "wrk", "asyncio"], default="auto")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--prompt", default=DEFAULT_PROMPT)
    parser.add_argument(
        "--upstream",
        action="store_true",
        help="agenthost's agent relays to a bare upstream through the openai provider",
    )
    args = parser.parse_args(argv)
    if args.client == "auto":
        args.client = "wrk" if shutil.which("wrk") else "asyncio"
    if args.concurrency < args.threads:
        parser.error("--concurrency must be at least --threads")
    return args


def check_servers(servers: Sequence[Server], prompt: str) -> None:
    """Print (and warn about) reply sizes and the event loop / HTTP parser in use."""
    shapes = {server.name: reply_shape(server.port, prompt) for server in servers}
    for server in servers:
        size, events, stream_bytes = shapes[server.name]
        libraries = loaded_libraries(server.process.pid)
        loaded = ", ".join(f"{name} {'yes' if ok else 'NO'}" for name, ok in libraries.items())
        print(
            f"  {server.name:<10} pid {server.process.pid:<7} port {server.port:<6} "
            f"reply {size} B; stream {events} events, {stream_bytes} B; {loaded}"
        )
    if len(set(shapes.values())) > 1:
        print("  WARNING: the replies differ in size; the comparison is not like for like")


def benchmark(args: argparse.Namespace, workdir: Path) -> list[Sample]:
    loadgen = LoadGen(args.client, args.concurrency, args.threads, workdir / "post.lua")
    loadgen.script.write_text(WRK_SCRIPT)
    bodies = {stream: workdir / f"body-{stream}.json" for stream in (False, True)}
    for stream, path in bodies.items():
        path.write_bytes(request_body(args.prompt, stream))
    budget = {False: args.requests, True: args.stream_requests}
    samples: list[Sample] = []
    with running_servers(workdir, args.prompt, args.upstream) as servers:
        for server in servers:
            wait_ready(server, bodies[False].read_bytes())
        check_servers(servers, args.prompt)
        for server in servers:
            for stream, body in bodies.items():
                run_load(loadgen, server.port, body, args.warmup, MARKERS[stream])
        for stream in (False, True):
            for round_, server in rounds(servers, args.rounds):
                sample = measure(server, loadgen, bodies[stream], budget[stream], stream, round_)
                samples.append(sample)
                print(
                    f"  round {round_} {'streamed' if stream else 'non-streamed':<12} "
                    f"{server.name:<10} {sample.requests / sample.elapsed:>7.0f} req/s "
                    f"{sample.cpu.total / max(sample.requests, 1) * 1e6:>7.0f} µs CPU/req",
                    flush=True,
                )
    return samples


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with it ignored
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the cleanup on SIGTERM too
    print(
        f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}; {os.cpu_count()} CPUs; "
        f"load: {args.client} (c={args.concurrency}, threads={args.threads}); "
        f"{args.requests} non-streamed / {args.stream_requests} streamed requests per phase, "
        f"{args.rounds} rounds" + ("; agenthost relays to an upstream" if args.upstream else "")
    )
    with tempfile.TemporaryDirectory(prefix="agenthost-bench-") as tmp:
        try:
            samples = benchmark(args, Path(tmp))
        except KeyboardInterrupt:
            print("interrupted; servers stopped", file=sys.stderr)
            return 130
    print()
    print(report(samples))
    failures = sum(sample.failures for sample in samples)
    if failures:
        print(f"\n{failures} failed requests", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
