"""Fallback load generator for when ``wrk`` is not installed: asyncio streams.

Sends ``--requests`` copies of one raw HTTP/1.1 request over ``--concurrency``
keep-alive connections and checks each reply (status 200 and ``--marker`` in
the body). It speaks the same line protocol as the driver's wrk script:

    BENCH-START                  when the first requests go out
    BENCH-THREAD-DONE            when the budget is spent
    BENCH-RESULT {json}          sent, received, bad, errors

Run by ``openai_overhead.py`` as its own process, never in a server's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

with contextlib.suppress(ImportError):  # uvloop makes the client cheaper; optional
    import uvloop


@dataclass
class Tally:
    """What the run did; ``bad`` is a reply that was not 200 or lacked the marker."""

    budget: int
    sent: int = 0
    received: int = 0
    bad: int = 0
    errors: int = 0

    def take(self) -> bool:
        """Claim one request from the budget (single-threaded, no lock needed)."""
        if self.sent >= self.budget:
            return False
        self.sent += 1
        return True


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers are expected
            return b"".join(parts)
        parts.append((await reader.readexactly(size + 2))[:-2])


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response: its status and (de-chunked) body."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head[:-4].split(b"\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    status = int(status_line.split(b" ", 2)[1])
    if b"content-length" in headers:
        return status, await reader.readexactly(int(headers[b"content-length"]))
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        return status, await _read_chunked(reader)
    raise ValueError("response has neither content-length nor chunked encoding")


async def _connection(host: str, port: int, request: bytes, marker: bytes, tally: Tally) -> None:
    """One keep-alive connection taking requests from the budget until it is spent."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while tally.take():
            try:
                writer.write(request)
                status, body = await read_response(reader)
            except (OSError, ValueError, asyncio.IncompleteReadError):
                tally.errors += 1
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
                continue
            tally.received += 1
            tally.bad += int(status != 200 or marker not in body)
    finally:
        writer.close()


def build_request(
    host: str, port: int, path: str, body: bytes, headers: list[str] | None = None
) -> bytes:
    extra = "".join(f"{header}\r\n" for header in headers or ())
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{extra}"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def run(args: argparse.Namespace, body: bytes) -> Tally:
    request = build_request(args.host, args.port, args.path, body, args.header)
    tally = Tally(budget=args.requests)
    print("BENCH-START", flush=True)
    connections = [
        _connection(args.host, args.port, request, args.marker.encode(), tally)
        for _ in range(args.concurrency)
    ]
    await asyncio.gather(*connections)
    print("BENCH-THREAD-DONE", flush=True)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/v1/chat/completions")
    parser.add_argument("--body", required=True, help="file holding the JSON request body")
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--marker", default="", help="text every good reply contains")
    parser.add_argument(
        "--header", action="append", default=[], help="an extra request header, 'Name: value'"
    )
    args = parser.parse_args()
    runner = uvloop.run if "uvloop" in sys.modules else asyncio.run
    tally = runner(run(args, Path(args.body).read_bytes()))
    print("BENCH-RESULT", json.dumps(asdict(tally)), flush=True)


if __name__ == "__main__":
    main()
