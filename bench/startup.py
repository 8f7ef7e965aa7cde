"""Start-up of ``agenthost serve`` with every protocol: this tree against a baseline, alternated.

Each run spawns ``python -m agenthost.app serve`` with one ``echo`` agent,
every HTTP protocol and A2A gRPC on a free port, and times it from spawn to
``/readyz`` 200: wall clock, and the process's CPU (user + system, from
``/proc``: on a shared machine wall time is mostly waiting for a CPU, so
compare CPU). It then sends each protocol its first request and times it
(what a protocol built on its first use makes that request pay), and stops
the server. Runs alternate between this working tree and ``--baseline``
(a git ref, exported with ``git archive`` into a temporary directory; both
trees' modules are compiled first, as an installed package's are).

    .venv/bin/python bench/startup.py                      # 5 runs each, against main
    .venv/bin/python bench/startup.py --runs 3 --imports   # and -X importtime, side by side
    .venv/bin/python bench/startup.py --baseline none      # this tree alone

``--imports`` adds one start of each tree under ``python -X importtime`` and
prints the top-level packages by import self time (importtime's own
overhead inflates them; compare the two columns, not with the CPU figures).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_overhead import HOST, REPO, cpu_times, free_port

CONFIG = """\
agents:
  - name: echo
    description: Repeats what you say.
    model: echo
"""
PROMPT = "Say hello."
_JSON = ("Content-Type: application/json",)
_MCP = (*_JSON, "Accept: application/json, text/event-stream", "MCP-Protocol-Version: 2025-06-18")
_A2A = (*_JSON, "A2A-Version: 1.0")
_A2A_MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": PROMPT}]}
_USER = {"id": "u-1", "role": "user", "content": PROMPT}


@dataclass(frozen=True)
class FirstRequest:
    """One protocol's first request after ``/readyz``: what it sends and what a good reply holds."""

    name: str
    method: str
    path: str
    body: object
    marker: str
    headers: tuple[str, ...] = _JSON


FIRST_REQUESTS = (
    FirstRequest(
        "openai",
        "POST",
        "/v1/chat/completions",
        {"model": "echo", "messages": [{"role": "user", "content": PROMPT}]},
        '"finish_reason":"stop"',
    ),
    FirstRequest(
        "anthropic",
        "POST",
        "/v1/messages",
        {"model": "echo", "max_tokens": 64, "messages": [{"role": "user", "content": PROMPT}]},
        '"stop_reason":"end_turn"',
    ),
    FirstRequest("a2a card", "GET", "/a2a/echo/.well-known/agent-card.json", None, '"name"', ()),
    FirstRequest(
        "a2a", "POST", "/a2a/echo/message:send", {"message": _A2A_MESSAGE}, "COMPLETED", _A2A
    ),
    FirstRequest(
        "mcp",
        "POST",
        "/mcp",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": PROMPT}},
        },
        '"isError":false',
        _MCP,
    ),
    FirstRequest(
        "acp",
        "POST",
        "/acp/runs",
        {
            "agent_name": "echo",
            "input": [
                {"role": "user", "parts": [{"content": PROMPT, "content_type": "text/plain"}]}
            ],
            "mode": "sync",
        },
        '"status":"completed"',
    ),
    FirstRequest(
        "ag_ui",
        "POST",
        "/ag-ui/echo",
        {"threadId": "t-1", "runId": "r-1", "messages": [_USER]},
        "RUN_FINISHED",
    ),
    FirstRequest(
        "ai_sdk",
        "POST",
        "/ai-sdk/echo",
        {
            "id": "c-1",
            "trigger": "submit-message",
            "messages": [
                {"id": "u-1", "role": "user", "parts": [{"type": "text", "text": PROMPT}]}
            ],
        },
        '"type":"finish"',
    ),
    FirstRequest(
        "orchestrate",
        "POST",
        "/orchestrate/echo/chat/completions",
        {"messages": [{"role": "user", "content": PROMPT}]},
        "Say hello",
    ),
)


@dataclass
class Run:
    """One start of one tree."""

    wall: float  # spawn to /readyz 200, s
    cpu: float  # the process's user + system CPU until then, s
    rss_mib: float
    first: dict[str, float] = field(default_factory=dict)  # protocol -> first request, s
    first_cpu: dict[str, float] = field(default_factory=dict)  # the server's CPU for it, s


@dataclass(frozen=True)
class Tree:
    name: str
    src: Path


def _request(port: int, request: FirstRequest) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(HOST, port, timeout=60)
    try:
        headers = dict(h.split(": ", 1) for h in request.headers)
        body = None if request.body is None else json.dumps(request.body).encode()
        connection.request(request.method, request.path, body, headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _ready(port: int) -> bool:
    with contextlib.suppress(OSError):
        connection = http.client.HTTPConnection(HOST, port, timeout=5)
        try:
            connection.request("GET", "/readyz")
            return connection.getresponse().status == 200
        finally:
            connection.close()
    return False


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@contextlib.contextmanager
def serving(
    tree: Tree, workdir: Path, python_options: tuple[str, ...] = ()
) -> Iterator[tuple[subprocess.Popen[bytes], int, Path]]:
    """``agenthost serve`` of ``tree`` (its ``src`` first on the path), stopped on the way out."""
    port = free_port()
    config = workdir / "agents.yaml"
    log = workdir / f"{tree.name}.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(tree.src),
        "AGENTHOST_A2A_GRPC_PORT": str(free_port()),
    }
    command = [sys.executable, *python_options, "-m", "agenthost.app", "serve"]
    command += ["--config", str(config), "--host", HOST, "--port", str(port)]
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [*command, "--log-level", "warning"],
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        yield process, port, log
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_ready(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"agenthost exited with {process.returncode}:\n{tail}")
        if _ready(port):
            return
        time.sleep(0.01)
    raise RuntimeError("agenthost not ready after 180 s")


def start_once(tree: Tree, workdir: Path) -> Run:
    spawned = time.monotonic()
    with serving(tree, workdir) as (process, port, log):
        wait_ready(process, port, log)
        run = Run(time.monotonic() - spawned, cpu_times(process.pid).total, _rss_mib(process.pid))
        for request in FIRST_REQUESTS:
            sent, cpu = time.monotonic(), cpu_times(process.pid).total
            status, body = _request(port, request)
            run.first[request.name] = time.monotonic() - sent
            run.first_cpu[request.name] = cpu_times(process.pid).total - cpu
            if status != 200 or request.marker.encode() not in body:
                raise RuntimeError(f"{tree.name} {request.name}: {status} {body[:300]!r}")
    return run


def import_profile(tree: Tree, workdir: Path) -> Counter[str]:
    """Import self time (µs) by top-level package of one start under ``-X importtime``."""
    with serving(tree, workdir, ("-X", "importtime")) as (process, port, log):
        wait_ready(process, port, log)
    by_package: Counter[str] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line.removeprefix("import time:").split("|")
        by_package[name.strip().split(".")[0]] += int(self_us)
    return by_package


PACKAGES = ("adapters", "agents", "app")
"""The packages at the repository's top; ``src/agenthost/`` links to them."""


def check_served_from(tree: Tree, workdir: Path) -> None:
    """Fail unless ``agenthost`` imports from ``tree`` (not from the installed one)."""
    probe = "import agenthost.app, pathlib; print(pathlib.Path(agenthost.app.__file__).resolve())"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(tree.src)},
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    )
    where = Path(done.stdout.strip())
    if not where.is_relative_to(tree.src.parent.resolve()):
        raise RuntimeError(f"{tree.name}: agenthost imports from {where}, not {tree.src}")


def export(ref: str, into: Path) -> Path:
    """``ref``'s packages and their ``src`` links, from ``git archive``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "src", *PACKAGES],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def compile_tree(src: Path) -> None:
    """Bytecode for every module of the tree, as an installed package has (compileall
    does not follow ``src/agenthost/``'s links, so the packages are named)."""
    packages = [str(src.parent / name) for name in PACKAGES]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.0f} ms"


def report(runs: dict[str, list[Run]]) -> None:
    names = list(runs)
    print(f"\n{'':<26}" + "".join(f"{name:>22}" for name in names))

    def row(label: str, values: list[str]) -> None:
        print(f"{label:<26}" + "".join(f"{value:>22}" for value in values))

    for label, pick in (("CPU to /readyz", "cpu"), ("wall to /readyz", "wall")):
        medians = [statistics.median(getattr(r, pick) for r in runs[n]) for n in names]
        lows = [min(getattr(r, pick) for r in runs[n]) for n in names]
        row(f"{label}, median", [f"{m:.2f} s" for m in medians])
        row(f"{label}, min", [f"{m:.2f} s" for m in lows])
        if len(names) == 2:
            row("", ["", f"{medians[1] / medians[0]:.2f}x of {names[0]}"])
    row(
        "idle RSS, median",
        [f"{statistics.median(r.rss_mib for r in runs[n]):.0f} MiB" for n in names],
    )
    print("first request after /readyz, median: wall (server CPU)")

    def first(run: Run, name: str | None) -> str:
        if name is None:
            return f"{_ms(sum(run.first.values()))} ({sum(run.first_cpu.values()) * 1000:.0f})"
        return f"{_ms(run.first[name])} ({run.first_cpu[name] * 1000:.0f})"

    def median_run(name: str, protocol: str | None) -> Run:
        ordered = sorted(
            runs[name], key=lambda r: r.first[protocol] if protocol else sum(r.first.values())
        )
        return ordered[len(ordered) // 2]

    for request in FIRST_REQUESTS:
        row(f"  {request.name}", [first(median_run(n, request.name), request.name) for n in names])
    row("  all of them", [first(median_run(n, None), None) for n in names])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="starts of each tree (5)")
    parser.add_argument("--baseline", default="main", help="git ref to compare with; none: skip")
    parser.add_argument("--imports", action="store_true", help="also -X importtime, side by side")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agenthost-startup-") as tmp:
        workdir = Path(tmp)
        (workdir / "agents.yaml").write_text(CONFIG)
        trees = [Tree("tree", REPO / "src")]
        if args.baseline != "none":
            (workdir / "baseline").mkdir()
            trees.insert(0, Tree(args.baseline, export(args.baseline, workdir / "baseline")))
        for tree in trees:
            compile_tree(tree.src)
            start_once(tree, workdir)  # warm-up: the OS's file cache, not measured
            check_served_from(tree, workdir)
        load = os.getloadavg()[0]
        print(f"{args.runs} runs each, alternated; load average {load:.1f}; {os.cpu_count()} CPUs")
        runs: dict[str, list[Run]] = {tree.name: [] for tree in trees}
        for index in range(args.runs):
            for tree in trees if index % 2 == 0 else trees[::-1]:
                run = start_once(tree, workdir)
                runs[tree.name].append(run)
                print(f"  {tree.name:<8} {run.wall:6.2f} s wall {run.cpu:6.2f} s CPU", flush=True)
        report(runs)
        if args.imports:
            profiles = {tree.name: import_profile(tree, workdir) for tree in trees}
            top = Counter[str]()
            for profile in profiles.values():
                top.update(profile)
            print("\nimport self time by package (-X importtime, one start each):")
            print(f"{'':<26}" + "".join(f"{name:>22}" for name in profiles))
            for package, _ in top.most_common(15):
                values = [_ms(profile[package] / 1e6) for profile in profiles.values()]
                print(f"{package:<26}" + "".join(f"{value:>22}" for value in values))
            totals = [_ms(sum(profile.values()) / 1e6) for profile in profiles.values()]
            print(f"{'all':<26}" + "".join(f"{value:>22}" for value in totals))
        print(f"(load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
