"""Memory per 10-turn session on every protocol, in process and in Redis.

For each protocol (Responses chains, Conversations, MCP ``tools/call`` with a
``session_id``, IBM ACP runs with a ``session_id``, A2A ``message:send``
with a ``contextId``), a fresh subprocess builds agenthost's app in-process
(``create_app``, httpx's ASGI transport) with one agent answering a short
paragraph, runs ``--sessions`` conversations of ``--turns`` turns and
measures what they left behind:

- **memory**: the growth of Python's traced memory (``tracemalloc``, after
  a garbage collection, warm-up sessions excluded) divided by the sessions:
  every store the protocol keeps for a session (the session's messages, A2A
  tasks, ACP runs, stored responses...). Two batches of ``--sessions`` run
  one after the other: ``KiB/session`` is the second's growth (what each
  session keeps), ``first batch`` the first's, which also holds one-time
  allocations (caches and free lists still filling, ~50 KB: what this
  column showed before session 15);
- **redis**: with ``--redis`` (a ``redis-server`` on PATH), the same run
  against ``AGENTHOST_SESSION_STORE=redis://...``: the sum of
  ``MEMORY USAGE`` of every key, per session, and the traced memory left
  in the process.

    .venv/bin/python bench/protocol_sessions.py [--sessions 200] [--turns 10] [--redis]
        [--top N] [--rss]

``--top N`` also prints, per protocol in process, the N source lines whose
allocations grew most (``tracemalloc``), in bytes per session: what holds it.

``--rss`` also runs each protocol in process once more without tracing and
prints the growth of the process's resident memory per session over its
second batch (the first grows the process once, by ~17 MB on Responses): what
tracemalloc does not see (protobuf's upb arenas: a live A2A ``Task`` copy is
~2.9 KB resident against ~120 B traced) and its own cost left out.

The issue's goal: at most 8 KiB per 10-turn session on every protocol.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

QUESTION = "Could you tell me what the weather will be like in Lyon tomorrow morning? "
ANSWER = (
    "Tomorrow morning in Lyon should be mild and mostly dry: around 12 °C at "
    "eight, light wind from the south, clouds building towards noon with a "
    "chance of a shower in the afternoon. Take a light jacket; an umbrella "
    "is only worth it if you are out after two. "
)
PROTOCOLS = ("responses", "conversations", "mcp", "acp", "a2a")
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}
A2A_HEADERS = {"A2A-Version": "1.0"}
WARMUP = 20  # sessions run before measuring (caches, lazy imports)

Turn = Callable[[Any, dict[str, Any], int], Awaitable[None]]


def _ok(answer: Any, what: str) -> Any:
    if answer.status_code >= 300:
        raise RuntimeError(f"{what}: {answer.status_code} {answer.text[:300]}")
    return answer.json()


async def _responses(client: Any, state: dict[str, Any], turn: int) -> None:
    body: dict[str, Any] = {"model": "chat", "input": QUESTION, "store": True}
    if "previous" in state:
        body["previous_response_id"] = state["previous"]
    state["previous"] = _ok(await client.post("/v1/responses", json=body), "responses")["id"]


async def _conversations(client: Any, state: dict[str, Any], turn: int) -> None:
    if "conversation" not in state:
        made = _ok(await client.post("/v1/conversations", json={}), "conversations")
        state["conversation"] = made["id"]
    body = {
        "model": "chat",
        "input": QUESTION,
        "store": False,
        "conversation": state["conversation"],
    }
    _ok(await client.post("/v1/responses", json=body), "conversation turn")


async def _mcp(client: Any, state: dict[str, Any], turn: int) -> None:
    session = state.setdefault("session", uuid.uuid4().hex)
    call = {
        "jsonrpc": "2.0",
        "id": turn,
        "method": "tools/call",
        "params": {"name": "chat", "arguments": {"message": QUESTION, "session_id": session}},
    }
    answer = await client.post("/mcp", json=call, headers=MCP_HEADERS)
    if answer.status_code != 200 or '"isError":false' not in answer.text.replace(" ", ""):
        raise RuntimeError(f"mcp: {answer.status_code} {answer.text[:300]}")


async def _acp(client: Any, state: dict[str, Any], turn: int) -> None:
    session = state.setdefault("session", str(uuid.uuid4()))
    run = {
        "agent_name": "chat",
        "session_id": session,
        "mode": "sync",
        "input": [{"role": "user", "parts": [{"content": QUESTION, "content_type": "text/plain"}]}],
    }
    done = _ok(await client.post("/acp/runs", json=run), "acp")
    if done.get("status") != "completed":
        raise RuntimeError(f"acp: {done}")


async def _a2a(client: Any, state: dict[str, Any], turn: int) -> None:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": QUESTION}],
    }
    if "context" in state:
        message["contextId"] = state["context"]
    answer = _ok(
        await client.post("/a2a/chat/message:send", json={"message": message}, headers=A2A_HEADERS),
        "a2a",
    )
    task = answer.get("task") or answer.get("message") or answer
    state["context"] = task["contextId"]


TURNS: dict[str, Turn] = {
    "responses": _responses,
    "conversations": _conversations,
    "mcp": _mcp,
    "acp": _acp,
    "a2a": _a2a,
}


async def _sessions(client: Any, protocol: str, count: int, turns: int) -> None:
    turn_of = TURNS[protocol]
    states: list[dict[str, Any]] = [{} for _ in range(count)]
    for turn in range(turns):
        for state in states:
            await turn_of(client, state, turn)


async def _settle() -> None:
    """Collect garbage, letting the loop finalize the async generators it frees."""
    for _ in range(3):
        gc.collect()
        await asyncio.sleep(0.05)


def _top(before: Any, after: Any, count: int, sessions: int) -> list[str]:
    """The ``count`` source lines whose allocations grew most, in bytes per session."""
    lines = []
    for stat in after.compare_to(before, "lineno")[:count]:
        frame = stat.traceback[0]
        where = f"{frame.filename.split('site-packages/')[-1].split('/src/')[-1]}:{frame.lineno}"
        size, blocks = stat.size_diff / sessions, stat.count_diff / sessions
        lines.append(f"{size:>8.0f} B {blocks:>6.1f} blocks  {where}")
    return lines


def _resident() -> int:
    """The process's resident bytes (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _measure(
    protocol: str, sessions: int, turns: int, store: str, top: int = 0, rss: bool = False
) -> dict[str, Any]:
    import httpx
    from asgi_lifespan import LifespanManager

    from agenthost.agents import ChatAgent
    from agenthost.agents.models import FunctionModel
    from agenthost.app.server import create_app
    from agenthost.app.settings import Settings

    agent = ChatAgent("chat", FunctionModel(lambda request: ANSWER))
    settings = Settings(session_store=store, session_max=100_000, log_level="warning")
    app = create_app(settings, {"chat": agent})
    async with LifespanManager(app) as manager:
        transport = httpx.ASGITransport(app=manager.app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            await _sessions(client, protocol, WARMUP, turns)
            await _settle()
            if rss:  # untraced: resident memory only, over a second batch as below (the
                # first grows the process once by ~17 MB on Responses: thread pools, arenas)
                await _sessions(client, protocol, sessions, turns)
                await _settle()
                resident = _resident()
                await _sessions(client, protocol, sessions, turns)
                await _settle()
                grown = _resident() - resident
                return {"protocol": protocol, "rss_per_session": grown / sessions}
            tracemalloc.start()
            start = tracemalloc.get_traced_memory()[0]
            started = time.perf_counter()
            await _sessions(client, protocol, sessions, turns)
            elapsed = time.perf_counter() - started
            await _settle()
            # A second batch: what the first one grew by one-time allocations (caches,
            # free lists, a request's last objects: ~50 KB, 1.7 KiB a session of 30)
            # does not grow again; what each session keeps does.
            before = tracemalloc.get_traced_memory()[0]
            first = tracemalloc.take_snapshot() if top else None
            await _sessions(client, protocol, sessions, turns)
            await _settle()
            after = tracemalloc.get_traced_memory()[0]
            lines = _top(first, tracemalloc.take_snapshot(), top, sessions) if top else []
            tracemalloc.stop()
    return {
        "protocol": protocol,
        "bytes_per_session": (after - before) / sessions,
        "first_batch_bytes_per_session": (before - start) / sessions,
        "ms_per_turn": elapsed / (sessions * turns) * 1e3,
        "top": lines,
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def _redis() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("--redis needs redis-server on PATH (apt-get install -y redis-server)")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="bench-redis-") as folder:
        process = subprocess.Popen(
            [binary, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", folder],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                    break
                time.sleep(0.1)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait(10)


async def _redis_bytes(url: str) -> int:
    import redis.asyncio as redis

    client = redis.from_url(url)
    total = 0
    async for key in client.scan_iter(count=1000):
        total += int(await client.memory_usage(key, samples=0) or 0)
    await client.aclose()
    return total


def _child(
    protocol: str, sessions: int, turns: int, store: str, top: int = 0, rss: bool = False
) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", protocol, "--sessions", str(sessions)]
    command += ["--turns", str(turns), "--store", store, "--top", str(top)]
    command += ["--rss"] if rss else []
    out = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"{protocol} on {store} failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--protocols", default=",".join(PROTOCOLS))
    parser.add_argument("--redis", action="store_true", help="also with sessions in Redis")
    parser.add_argument(
        "--top", type=int, default=0, help="print the N source lines that hold the most"
    )
    parser.add_argument(
        "--rss", action="store_true", help="also the resident memory per session, untraced"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--store", default="memory", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        measured = _measure(args.child, args.sessions, args.turns, args.store, args.top, args.rss)
        print(json.dumps(asyncio.run(measured)))
        return 0
    print(
        f"{args.sessions} sessions x {args.turns} turns per protocol "
        f"({len(QUESTION)}-character question, {len(ANSWER)}-character answer); "
        f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )
    print(
        f"{'protocol':14} {'store':6} {'KiB/session':>11} {'first batch':>11} "
        f"{'redis KiB/session':>17} {'ms/turn':>8}"
    )
    for protocol in args.protocols.split(","):
        result = _child(protocol, args.sessions, args.turns, "memory", args.top)
        kib = result["bytes_per_session"] / 1024
        first = result["first_batch_bytes_per_session"] / 1024
        print(
            f"{protocol:14} {'memory':6} {kib:>11.1f} {first:>11.1f} {'':>17} "
            f"{result['ms_per_turn']:>8.2f}"
        )
        for line in result["top"]:
            print("    " + line)
        if args.rss:
            resident = _child(protocol, args.sessions, args.turns, "memory", rss=True)
            print(f"    resident (untraced): {resident['rss_per_session'] / 1024:.1f} KiB/session")
    if args.redis:
        with _redis() as url:
            for protocol in args.protocols.split(","):
                before = asyncio.run(_redis_bytes(url))
                result = _child(protocol, args.sessions, args.turns, url)
                after = asyncio.run(_redis_bytes(url))
                stored = (after - before) / (2 * args.sessions + WARMUP) / 1024
                kib = result["bytes_per_session"] / 1024
                first = result["first_batch_bytes_per_session"] / 1024
                print(
                    f"{protocol:14} {'redis':6} {kib:>11.1f} {first:>11.1f} {stored:>17.1f} "
                    f"{result['ms_per_turn']:>8.2f}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
