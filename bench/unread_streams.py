"""Memory per in-flight streamed request whose client never reads, protocol by protocol.

For each surface a fresh ``agenthost serve`` (one ``echo`` agent, that
protocol alone); ``--streams`` streamed echo requests with a body of
``--body-mib`` each, sent whole, their answers never read (a 4 KiB receive
buffer); once the server's RSS has been still for 2 s (or ``--settle``
seconds passed), its growth per stream and as a multiple of the body.

With ``--answer-mib``, the agent named ``echo`` answers any message with
that many MiB instead (an async generator of 6,000-byte pieces, a loop
turn between two), the multiple is of the answer: a short question and a
long answer, the common case of a model, where what a run has not yet
sent is most of what it holds.

    .venv/bin/python bench/unread_streams.py [--streams 4] [--body-mib 2] [--only a2a-jsonrpc,acp]
        [--answer-mib 4 --body-mib 0.001]
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).parent))

from fairness import CONFIG, HOST, MIB, SERVER, rss, serving


def _text(size: int, shell: Callable[[str], object]) -> bytes:
    """``shell(text)`` as JSON of exactly ``size`` bytes (words of 5 letters)."""
    room = size - len(orjson.dumps(shell("")))
    body = orjson.dumps(shell(("lorem " * (room // 6 + 1))[:room]))
    assert len(body) == size
    return body


def chat(size: int) -> tuple[str, bytes]:
    return "/v1/chat/completions", _text(
        size,
        lambda t: {"model": "echo", "stream": True, "messages": [{"role": "user", "content": t}]},
    )


def responses(size: int) -> tuple[str, bytes]:
    return "/v1/responses", _text(size, lambda t: {"model": "echo", "stream": True, "input": t})


def _a2a_message(text: str) -> dict[str, object]:
    return {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}


def a2a_jsonrpc(size: int) -> tuple[str, bytes]:
    return "/a2a/echo", _text(
        size,
        lambda t: {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendStreamingMessage",
            "params": {"message": _a2a_message(t)},
        },
    )


def a2a_rest(size: int) -> tuple[str, bytes]:
    return "/a2a/echo/message:stream", _text(size, lambda t: {"message": _a2a_message(t)})


def acp(size: int) -> tuple[str, bytes]:
    return "/acp/runs", _text(
        size,
        lambda t: {
            "agent_name": "echo",
            "mode": "stream",
            "input": [{"role": "user", "parts": [{"content_type": "text/plain", "content": t}]}],
        },
    )


SURFACES = {
    "chat": ("openai", chat),
    "responses": ("openai", responses),
    "a2a-jsonrpc": ("a2a", a2a_jsonrpc),
    "a2a-rest": ("a2a", a2a_rest),
    "acp": ("acp", acp),
}


def unread(port: int, path: str, body: bytes) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(30)
    sock.connect((HOST, port))
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nA2A-Version: 1.0\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    return sock


LONG_ANSWER = """\
import asyncio
import os

PIECE = "lorem " * 1000
COUNT = int(os.environ["BENCH_ANSWER_BYTES"]) // len(PIECE)


async def echo(messages):
    for _ in range(COUNT):
        await asyncio.sleep(0)
        yield PIECE
"""


def measure(
    surface: str, streams: int, body_mib: float, settle: float, answer_mib: float = 0
) -> tuple[float, float]:
    adapter, make = SURFACES[surface]
    size = int(body_mib * MIB)
    path, body = make(size)
    env = {"AGENTHOST_ADAPTERS": adapter, "AGENTHOST_SEND_STALL_SECONDS": "0"}
    config, files = CONFIG, {}
    if answer_mib:
        answer = int(answer_mib * MIB)
        env |= {"BENCH_ANSWER_BYTES": str(answer), "AGENTHOST_MAX_OUTPUT_CHARS": str(2 * answer)}
        config = "agents:\n  - {name: echo, import: 'long_answer:echo'}\n"
        files = {"long_answer.py": LONG_ANSWER}
        size = answer
    with serving(SERVER, env, config, files) as (pid, port):
        time.sleep(1)
        before = rss(pid)
        sockets = [unread(port, path, body) for _ in range(streams)]
        last, still, started = rss(pid), time.monotonic(), time.monotonic()
        while time.monotonic() - started < settle:
            time.sleep(0.5)
            now = rss(pid)
            if abs(now - last) > MIB:
                last, still = now, time.monotonic()
            elif time.monotonic() - still >= 2:
                break
        grown = (rss(pid) - before) / streams
        for sock in sockets:
            sock.close()
    return grown / MIB, grown / size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--body-mib", type=float, default=2.0)
    parser.add_argument("--settle", type=float, default=30.0)
    parser.add_argument("--only", default=",".join(SURFACES))
    parser.add_argument("--answer-mib", type=float, default=0.0)
    args = parser.parse_args()
    what = f"{args.answer_mib:g} MiB answers" if args.answer_mib else "bodies"
    print(f"{args.streams} unread streams of {args.body_mib:g} MiB bodies, per stream:")
    for surface in args.only.split(","):
        mib, ratio = measure(surface, args.streams, args.body_mib, args.settle, args.answer_mib)
        print(f"{surface:12} {mib:7.1f} MiB  {ratio:5.1f}x its {what}", flush=True)


if __name__ == "__main__":
    main()
