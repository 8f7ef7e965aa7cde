"""Real Redis and PostgreSQL servers for the tests, on free ports in temporary folders.

Each is started once per test session (``redis_url``, ``postgres_url``
fixtures; import them into a conftest or a test module) and stopped at the
end. A test that needs one is skipped, with the reason, only when the
server's binaries are not installed (``apt-get install -y redis-server
postgresql``: CI's Makefile does it). :class:`ReplyCutter` sits between a
client and a real Redis to lose one answer, as a failure at the wrong moment does.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.upstream import free_port

POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")


def _wait_for_port(port: int, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start on port {port}") from None
            time.sleep(0.05)


class RedisServer:
    """A ``redis-server`` on 127.0.0.1 that a test can stop and start again (same data)."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None
        self.process = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--save",
                "",
                "--appendonly",
                "yes",  # a restart keeps what was written
                "--appendfsync",
                "always",
                "--maxmemory-policy",
                "allkeys-lru",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, self.process, "redis-server")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


class ReplyCutter:
    """A TCP proxy to Redis that can lose the answer to one request, for real.

    Once armed with a marker, the request whose bytes contain it is forwarded
    (Redis applies it) and then the connection is closed before its answer
    reaches the client, as when Redis or the network fails at that moment.
    """

    def __init__(self, target: int) -> None:
        self.target = target
        self.marker: bytes | None = None
        self.cuts = 0
        self.port = 0

    async def __aenter__(self) -> ReplyCutter:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        cut = asyncio.Event()

        async def upstream() -> None:
            while data := await reader.read(65536):
                if self.marker is not None and self.marker in data:
                    self.marker = None
                    cut.set()  # before Redis can answer
                up_writer.write(data)
                await up_writer.drain()

        async def downstream() -> None:
            while data := await up_reader.read(65536):
                if cut.is_set():
                    self.cuts += 1
                    break
                writer.write(data)
                await writer.drain()

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        for stream in (writer, up_writer):
            stream.close()


@contextmanager
def redis_server() -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install -y redis-server)")
    with tempfile.TemporaryDirectory(prefix="agenthost-redis-") as folder:
        server = RedisServer(Path(folder))
        server.start()
        try:
            yield server
        finally:
            server.stop()


@contextmanager
def redis_sentinel(master: RedisServer, folder: Path, service: str) -> Iterator[int]:
    """A Redis Sentinel watching ``master`` as ``service``; yields its port."""
    port = free_port()
    config = folder / "sentinel.conf"  # Sentinel rewrites its config file: one of its own
    config.write_text(
        f"port {port}\nbind 127.0.0.1\ndir {folder}\n"
        f"sentinel monitor {service} 127.0.0.1 {master.port} 1\n"
    )
    binary = shutil.which("redis-server")
    assert binary is not None
    process = subprocess.Popen(
        [binary, str(config), "--sentinel"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_for_port(port, process, "redis sentinel")
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def _as_postgres(*command: str) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return list(command)


class PostgresServer:
    """A PostgreSQL cluster in a folder, which a test can stop and start again (same data)."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://agenthost@127.0.0.1:{self.port}/agenthost"

    def create(self) -> None:
        """``initdb``, start, and ``createdb agenthost``."""
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        initdb = str(POSTGRES_BIN / "initdb")
        data = str(self.folder / "data")
        subprocess.run(
            _as_postgres(initdb, "-D", data, "-U", "agenthost", "--auth=trust", "-E", "UTF8"),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        self.start()
        address = ("-h", "127.0.0.1", "-p", str(self.port))
        subprocess.run(
            [str(POSTGRES_BIN / "createdb"), *address, "agenthost"],
            env={**os.environ, "PGUSER": "agenthost"},
            check=True,
        )

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        postgres = str(POSTGRES_BIN / "postgres")
        self.process = subprocess.Popen(
            _as_postgres(postgres, "-D", str(self.folder / "data"), *options.split()),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for_port(self.port, self.process, "postgres")
        self._wait_until_accepting()

    def _wait_until_accepting(self) -> None:
        """Until it takes queries: it listens ~0.1 s before, answering "the database system
        is starting up", which made a check right after ``start`` fail now and then."""
        ready = [str(POSTGRES_BIN / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        deadline = time.monotonic() + 30
        while subprocess.run(ready, check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"postgres on port {self.port} never accepted connections")
            time.sleep(0.05)

    def stop(self) -> None:
        """A fast shutdown (clients are disconnected), waited for.

        Not a signal to ``runuser``: it would kill the postmaster after 2 s
        and leave its backends holding the cluster.
        """
        if self.process is not None:
            pg_ctl = str(POSTGRES_BIN / "pg_ctl")
            data = str(self.folder / "data")
            subprocess.run(
                _as_postgres(pg_ctl, "stop", "-D", data, "-m", "fast", "-w", "-t", "60"),
                check=False,
                stdout=subprocess.DEVNULL,
            )
            self.process.wait(timeout=30)
            self.process = None


@contextmanager
def postgres(port: int | None = None) -> Iterator[PostgresServer]:
    """A PostgreSQL cluster in a temporary folder, running; removed after."""
    if not (POSTGRES_BIN / "initdb").exists():
        pytest.skip("PostgreSQL 15 is not installed (apt-get install -y postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="agenthost-pg-"))
    server = PostgresServer(folder, port)
    try:
        server.create()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def postgres_server(port: int | None = None) -> Iterator[str]:
    """A PostgreSQL cluster in a temporary folder; yields a ``postgresql+asyncpg://`` URL."""
    with postgres(port) as server:
        yield server.url


@pytest.fixture(scope="session")
def redis() -> Iterator[RedisServer]:
    """One Redis for the test session (tests use their own key prefixes or flush it)."""
    with redis_server() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url
