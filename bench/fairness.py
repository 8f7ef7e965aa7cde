"""One key against another: stalled bodies, unread streams, the other key's latency, memory.

Starts ``agenthost serve`` (one ``echo`` agent, two API keys) and then:

1. key A opens ``--streams`` streamed echo requests of ``--body-mib`` each
   and never reads them: the server's RSS growth per in-flight streamed
   request (after the bodies are in and the streams have filled the sockets);
2. key A also sends ``--bodies`` requests with bodies of ``--body-mib``
   each, all but the last byte, and stalls; meanwhile key B sends requests
   with a 128 KiB body for ``--seconds``: B's statuses and latency;
3. after ``--stall`` seconds (``AGENTHOST_SEND_STALL_SECONDS``), which of A's
   unread streams the server closed, and the RSS then.

    .venv/bin/python bench/fairness.py [--streams 32] [--bodies 32] [--body-mib 4]
        [--seconds 10] [--stall 20] [--per-key-mib M]

For the before numbers run it with ``PYTHONPATH=<another checkout>/src``
(the server subprocess inherits it, so it imports that checkout's code).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson

HOST = "127.0.0.1"
REPO = Path(__file__).resolve().parent.parent
CONFIG = "agents:\n  - {name: echo, model: echo, description: Repeats.}\n"
KEY_A, KEY_B = "alice-key-0123456789", "bob-key-0123456789ab"
MIB = 1024 * 1024
SERVER = str(REPO / ".venv" / "bin" / "agenthost")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def chat_body(size: int, *, stream: bool) -> bytes:
    """A chat completion request of exactly ``size`` bytes (words of 5 letters)."""
    shell = {"model": "echo", "messages": [{"role": "user", "content": ""}], "stream": stream}
    room = size - len(orjson.dumps(shell))
    words = "lorem " * (room // 6 + 1)
    shell["messages"][0]["content"] = words[:room]  # type: ignore[index]
    body = orjson.dumps(shell)
    assert len(body) == size
    return body


def head(key: str, length: int) -> bytes:
    return (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {key}"
        f"\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def rss(pid: int) -> int:
    """Resident bytes of ``pid`` (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


@contextlib.contextmanager
def serving(
    server: str, env: dict[str, str], config_text: str = CONFIG, files: dict[str, str] | None = None
) -> Iterator[tuple[int, int]]:
    """``(pid, port)`` of ``agenthost serve`` with ``env`` (its config ``config_text``, with
    ``files`` beside it), stopped on the way out."""
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "agents.yaml"
        config.write_text(config_text)
        for name, text in (files or {}).items():
            (Path(folder) / name).write_text(text)
        command = [server, "serve", "--config", str(config), "--host", HOST, "--port", str(port)]
        process = subprocess.Popen(
            [*command, "--log-level", "warning"],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"http://{HOST}:{port}/healthz", timeout=1).status_code == 200:
                        break
                if process.poll() is not None:
                    raise RuntimeError(f"the server exited with {process.returncode}")
                time.sleep(0.2)
            yield process.pid, port
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def unread_stream(port: int, key: str, body: bytes) -> socket.socket | None:
    """A streamed request sent whole, whose answer is never read (a small receive buffer)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        sock.settimeout(30)
        sock.connect((HOST, port))
        sock.sendall(head(key, len(body)) + body)
    except OSError:
        sock.close()
        return None
    return sock


def stalled_body(port: int, key: str, body: bytes) -> socket.socket | None:
    """All of a body but its last byte, then nothing."""
    sock = socket.socket()
    try:
        sock.settimeout(30)
        sock.connect((HOST, port))
        sock.sendall(head(key, len(body)) + body[:-1])
    except OSError:
        sock.close()
        return None
    return sock


def accepted(sock: socket.socket) -> bool:
    """The server began a 200 answer on ``sock`` (peeked: the bytes stay unread)."""
    sock.settimeout(60)
    try:
        return sock.recv(12, socket.MSG_PEEK).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def stream_state(sock: socket.socket, seconds: float = 1.0) -> str:
    """'closed' (the server ended it without [DONE]), 'done', or 'open' (still sending)."""
    sock.settimeout(seconds)
    tail = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            chunk = sock.recv(1 << 20)
            if not chunk:
                return "done" if b"data: [DONE]" in tail else "closed"
            tail = (tail + chunk)[-64:]
    except TimeoutError:
        return "open"
    except OSError:
        return "closed"
    return "open"


@dataclass
class Tally:
    statuses: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)


def other_key(port: int, key: str, stop: threading.Event, tally: Tally) -> None:
    body = chat_body(128 * 1024, stream=False)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    with httpx.Client(base_url=f"http://{HOST}:{port}", timeout=30) as client:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                reply = client.post("/v1/chat/completions", content=body, headers=headers)
                status = str(reply.status_code)
            except httpx.HTTPError as exc:
                status = type(exc).__name__
            tally.latencies.append(time.perf_counter() - started)
            tally.statuses[status] += 1


def percentile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--bodies", type=int, default=32)
    parser.add_argument("--body-mib", type=float, default=4.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--stall", type=float, default=20.0)
    parser.add_argument(
        "--per-key-mib",
        type=float,
        help="AGENTHOST_MAX_BODY_BYTES_PER_PRINCIPAL (default: its own)",
    )
    args = parser.parse_args()
    size = int(args.body_mib * MIB)
    env = {
        "AGENTHOST_API_KEYS": f"alice:{KEY_A},bob:{KEY_B}",
        "AGENTHOST_ADAPTERS": "openai",
        "AGENTHOST_ACCESS_LOG": "false",
        "AGENTHOST_MAX_BODY_BYTES": str(max(size, 4 * MIB)),
        "AGENTHOST_SEND_STALL_SECONDS": str(args.stall),
        "AGENTHOST_MAX_OUTPUT_CHARS": str(2 * size),  # the whole echo may be streamed
    }
    if args.per_key_mib is not None:
        env["AGENTHOST_MAX_BODY_BYTES_PER_PRINCIPAL"] = str(int(args.per_key_mib * MIB))
    stream_body = chat_body(size, stream=True)
    with serving(SERVER, env) as (pid, port):
        # Warm up: the first requests import and build what later ones reuse.
        for _ in range(3):
            httpx.post(
                f"http://{HOST}:{port}/v1/chat/completions",
                content=chat_body(128 * 1024, stream=False),
                headers={"Authorization": f"Bearer {KEY_B}"},
                timeout=30,
            )
        base = rss(pid)
        with ThreadPoolExecutor(64) as pool:
            streams = [
                s
                for s in pool.map(
                    lambda _: unread_stream(port, KEY_A, stream_body), range(args.streams)
                )
                if s is not None
            ]
            # Every stream answered (its body parsed, its run started), then the sockets fill.
            sent = time.monotonic()
            refused = [s for s in streams if not accepted(s)]
            streams = [s for s in streams if s not in refused]
            answered_in = time.monotonic() - sent
            with_streams = 0
            for _ in range(10):
                with_streams = max(with_streams, rss(pid))
                time.sleep(0.1)
            stop = threading.Event()
            tally = Tally()
            bob = threading.Thread(target=other_key, args=(port, KEY_B, stop, tally))
            bob.start()
            stalled_body_bytes = chat_body(size, stream=False)
            bodies = [
                s
                for s in pool.map(
                    lambda _: stalled_body(port, KEY_A, stalled_body_bytes), range(args.bodies)
                )
                if s is not None
            ]
            peak = rss(pid)
            deadline = time.monotonic() + args.seconds
            while time.monotonic() < deadline:
                peak = max(peak, rss(pid))
                time.sleep(0.2)
            stop.set()
            bob.join()
            answered, _, _ = select.select(bodies, [], [], 0)  # refused, or timed out
        time.sleep(max(0.0, args.stall + 2.0 - args.seconds))
        states = Counter(stream_state(s) for s in streams)
        after = rss(pid)
        for sock in (*streams, *refused, *bodies):
            sock.close()
    lat = sorted(tally.latencies)
    print(f"server code: {os.environ.get('PYTHONPATH') or REPO}")
    print(
        f"key A: {len(streams)} unread streams ({len(refused)} refused), "
        f"{args.bodies} stalled bodies ({args.bodies - len(bodies) + len(answered)} refused "
        f"or cut), of {size} bytes each"
    )
    print(f"RSS: base {base / MIB:.0f} MiB, with streams {with_streams / MIB:.0f} MiB, ", end="")
    print(f"peak {peak / MIB:.0f} MiB, after the stall {after / MIB:.0f} MiB")
    if streams:
        print(f"key A's streams answered within {answered_in:.1f} s of being sent")
        per = (with_streams - base) / len(streams)
        print(
            f"memory per in-flight streamed request: {per / MIB:.1f} MiB ({per / size:.1f}x body)"
        )
    print(f"key B: {sum(tally.statuses.values())} requests, statuses {dict(tally.statuses)}")
    if lat:
        p50, p99 = percentile(lat, 50) * 1000, percentile(lat, 99) * 1000
        print(f"key B latency: p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {lat[-1] * 1000:.0f} ms")
    if streams:
        print(f"key A's streams {args.stall + 2:.0f}+ s later: {dict(states)}")
    return 0 if set(tally.statuses) == {"200"} else 1


if __name__ == "__main__":
    sys.exit(main())
