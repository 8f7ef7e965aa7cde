"""CPU per streamed A2A request in this process, and what the gathering window does to it.

The app (``create_app``) is called directly as ASGI (no HTTP, no client
library): ``--streams`` concurrent HTTP+JSON ``message:stream`` requests of
an agent whose model streams ``--chunks`` text pieces ``--gap`` seconds
apart (the relay bench's upstream: 20 pieces over 1 s). Reported per
variant, the minimum over ``--rounds`` (variants alternated in each round):
the process's CPU per stream, the artifact events sent per stream, and the
time from a stream's start to its first text (its first ``artifactUpdate``)
over that of the model's first piece.

    .venv/bin/python bench/a2a_streams.py [--streams 200] [--chunks 20] [--gap 0.05]
        [--windows 0.05,0.1] [--chunk-chars 131072] [--rounds 3] [--profile FILE]

``--windows`` are values of the executor's ``FLUSH_EVERY`` (the later chunks'
gathering window, seconds), ``--chunk-chars`` of its ``CHUNK_CHARS`` (each
window with each); ``--gap 0`` is a model as fast as the loop (a large
answer: ``--chunks 200000`` is 1 MB). ``--profile FILE`` writes a cProfile
of one more round of the first variant (``python -m pstats FILE``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import statistics
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import orjson

from agenthost.agents import ChatAgent, TextDelta
from agenthost.agents.messages import Message
from agenthost.agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
)
from agenthost.agents.models.echo import word_response
from agenthost.app.server import create_app
from agenthost.app.serving import FULL_COLLECTION_EVERY
from agenthost.app.settings import Settings

PIECE = "word "


class PacedModel(BaseChatModel):
    """Streams ``chunks`` pieces ``gap`` seconds apart (the first after ``gap``)."""

    name = "paced"

    def __init__(self, chunks: int, gap: float) -> None:
        self.chunks, self.gap = chunks, gap

    async def request(self, request: ModelRequest) -> ModelResponse:
        return word_response(request, Message.assistant(PIECE * self.chunks))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        for _ in range(self.chunks):
            await asyncio.sleep(self.gap)
            yield TextDelta(PIECE)
        yield word_response(request, Message.assistant(PIECE * self.chunks))


async def one_stream(app: Any, gap: float) -> tuple[int, float]:
    """One ``message:stream``: its artifact events and its first text's delay past ``gap``."""
    body = orjson.dumps(
        {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    )
    done = asyncio.Event()
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    started = time.perf_counter()
    first = 0.0
    artifacts = 0
    tail = b""

    async def send(message: dict[str, Any]) -> None:
        nonlocal first, artifacts, tail
        if message["type"] == "http.response.start" and message["status"] != 200:
            raise RuntimeError(f"status {message['status']}")
        if message["type"] == "http.response.body":
            data = tail + message.get("body", b"")
            count = data.count(b'"artifactUpdate"')
            tail = data[-20:]
            if count and not artifacts:
                first = time.perf_counter() - started
            artifacts += count

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/a2a/relay/message:stream",
        "raw_path": b"/a2a/relay/message:stream",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"localhost"),
            (b"content-type", b"application/json"),
            (b"a2a-version", b"1.0"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    try:
        await app(scope, receive, send)
    finally:
        done.set()
    return artifacts, first - gap


async def phase(app: Any, streams: int, gap: float) -> tuple[float, float, float]:
    """CPU µs per stream, artifact events per stream, median first-text delay (ms)."""
    cpu = time.process_time()
    results = await asyncio.gather(*(one_stream(app, gap) for _ in range(streams)))
    cpu = time.process_time() - cpu
    events = sum(r[0] for r in results) / streams
    delay = statistics.median(r[1] for r in results) * 1e3
    return cpu / streams * 1e6, events, delay


async def main_async(args: argparse.Namespace) -> None:
    from asgi_lifespan import LifespanManager

    agent = ChatAgent("relay", PacedModel(args.chunks, args.gap))
    settings = Settings(session_max=100_000, log_level="warning")
    app = create_app(settings, {"relay": agent})
    # Imported once the app is built: the adapter sets the SDK's switches before its import.
    from agenthost.adapters.a2a import executor

    variants = [
        (float(window), int(chars))
        for window in args.windows.split(",")
        for chars in args.chunk_chars.split(",")
    ]
    async with LifespanManager(app) as manager:
        served = manager.app
        # As the served process does once started (app/serving.py): start-up frozen,
        # full collections rarer.
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_COLLECTION_EVERY)
        await phase(served, min(args.streams, 50), args.gap)  # warm-up
        best: dict[tuple[float, int], list[tuple[float, float, float]]] = {
            variant: [] for variant in variants
        }
        for _ in range(args.rounds):
            for variant in variants:
                executor.FLUSH_EVERY, executor.CHUNK_CHARS = variant
                best[variant].append(await phase(served, args.streams, args.gap))
        what = f"{args.streams} streams of {args.chunks} pieces {args.gap} s apart"
        print(f"{what}, CPU min of {args.rounds} rounds, the rest their median")
        print(
            f"{'FLUSH_EVERY':>12} {'CHUNK_CHARS':>12} {'CPU/stream µs':>14}"
            f" {'events/stream':>14} {'first text ms':>14}"
        )
        for (window, chars), runs in best.items():
            cpu = min(r[0] for r in runs)
            events = statistics.median(r[1] for r in runs)
            delay = statistics.median(r[2] for r in runs)
            print(f"{window:>12} {chars:>12} {cpu:>14.0f} {events:>14.1f} {delay:>14.1f}")
        if args.profile:
            executor.FLUSH_EVERY, executor.CHUNK_CHARS = variants[0]
            profiler = cProfile.Profile()
            profiler.enable()
            await phase(served, args.streams, args.gap)
            profiler.disable()
            profiler.dump_stats(args.profile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.05)
    parser.add_argument("--windows", default="0.05,0.1")
    parser.add_argument("--chunk-chars", default=str(128 * 1024))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", default="")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
