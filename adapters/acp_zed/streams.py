"""asyncio streams on stdin and the protocol's stdout, whatever they are.

An editor connects ``acp-stdio`` by pipes, but a shell may give it a file
(``acp-stdio agent > log``, ``< prompts``) or a socket. asyncio's pipe
transports take pipes, sockets and character devices; a regular file is
refused (``ValueError: Pipe transport is only for pipes…``), as the event
loop cannot poll it. For a file, the stream is served without polling: a
thread reads it into the reader, and writes go straight to it (a file is
always writable).
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import threading
from typing import IO, Any

READ_SIZE = 64 * 1024


async def open_streams(
    stdin: IO[Any], out: IO[bytes], *, limit: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A reader on ``stdin`` and a writer on ``out`` (pipes, sockets or files)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit, loop=loop)
    if _one_socket(stdin, out):
        # A pipe transport takes a readable socket for a closed one: one
        # socket transport for both ways instead.
        sock = socket.socket(fileno=os.dup(out.fileno()))
        reading = asyncio.StreamReaderProtocol(reader)
        both, _ = await loop.connect_accepted_socket(lambda: reading, sock)
        return reader, asyncio.StreamWriter(both, reading, reader, loop)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except ValueError:  # a regular file
        _read_in_thread(loop, reader, stdin.fileno())
    # StreamReaderProtocol (public) brings the flow control StreamWriter.drain
    # needs; its reader is never fed (nothing is read from ``out``).
    protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop)
    transport: asyncio.WriteTransport
    try:
        transport, _ = await loop.connect_write_pipe(lambda: protocol, out)
    except ValueError:  # a regular file
        transport = _FileTransport(out)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


def _one_socket(stdin: IO[Any], out: IO[bytes]) -> bool:
    a, b = os.fstat(stdin.fileno()), os.fstat(out.fileno())
    return stat.S_ISSOCK(b.st_mode) and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _read_in_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    def read() -> None:
        try:
            while data := os.read(fd, READ_SIZE):
                loop.call_soon_threadsafe(reader.feed_data, data)
        except OSError:
            pass
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=read, name="stdin-reader", daemon=True).start()


class _FileTransport(asyncio.WriteTransport):
    """Writes to a regular file as they come (a file never makes a writer wait)."""

    def __init__(self, out: IO[bytes]) -> None:
        super().__init__()
        self._out = out
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._out.fileno(), view) :]

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def abort(self) -> None:
        self._closing = True

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0
