"""The Redis client every shared store uses: time-outs, health checks, retries.

A Redis restart (or a failover) leaves the pool full of connections the
server has closed. Without a retry, the first command on each of them fails
("Connection closed by server.") although Redis answers again; so every
connection error or time-out is retried, after a short jittered back-off,
on a fresh connection, and a pooled connection idle for
:data:`HEALTH_CHECK_SECONDS` is PINGed before it is used.

redis-py retries whatever command failed, transactions included, so every
command the stores send must be safe to apply twice (its first try may have
been applied with only its answer lost): reads, ``PEXPIRE``, ``SET`` of a
lease, ``DEL``, ``PUBLISH`` (the listeners ignore a repeat) are; the
conversation append is made so by a token checked in the same script
(:mod:`agenthost.app.redis_memory`). The attempts of one operation are
bounded in time by the store's deadline (``store_timeout``), not by their
count: an outage still answers "unavailable" within it.

The pool is a blocking one of :data:`MAX_CONNECTIONS`: past it an operation
waits for a free connection (within its deadline) instead of failing at
once, as redis-py's default pool does past its 100 ("Too many connections":
100 concurrent operations were enough to fail requests).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import EqualJitterBackoff

from agenthost.app.settings import SESSION_STORE_SCHEMES

SENTINEL = "redis+sentinel://"
HEALTH_CHECK_SECONDS = 10
"""A connection idle this long is PINGed (and reconnected) before its next command."""
MAX_CONNECTIONS = 256
"""Connections to Redis per process; operations past it wait for one."""
RETRIES = 8
"""Attempts after the first; the deadline of the operation usually ends them first."""


def is_redis_url(url: str) -> bool:
    return url.startswith(SESSION_STORE_SCHEMES)


def retry_policy() -> Retry:
    """Retry connection errors and time-outs: 10 ms, 20 ms, … up to 250 ms apart, jittered."""
    return Retry(
        EqualJitterBackoff(cap=0.25, base=0.01),
        RETRIES,
        (redis_errors.ConnectionError, redis_errors.TimeoutError),
    )


def _options(timeout: float) -> dict[str, Any]:
    return {
        "socket_connect_timeout": timeout,
        "socket_timeout": timeout,
        "health_check_interval": HEALTH_CHECK_SECONDS,
        "retry": retry_policy(),
        "retry_on_error": [redis_errors.ConnectionError, redis_errors.TimeoutError],
    }


def redis_client(url: str, *, timeout: float) -> Redis:
    """A client for ``url`` whose connects and commands each give up after ``timeout`` s."""
    if url.startswith(SENTINEL):
        return _sentinel_client(url, timeout=timeout)
    pool = BlockingConnectionPool.from_url(
        url, max_connections=MAX_CONNECTIONS, timeout=timeout, **_options(timeout)
    )
    return Redis.from_pool(pool)  # the client owns the pool: its aclose() closes it


def _sentinel_client(url: str, *, timeout: float) -> Redis:
    """The current master of ``redis+sentinel://[[user]:password@]host[:port],…/service[/db]``.

    The sentinels (port 26379 unless given) are asked for the service's
    master at each (re)connect, so a failover is followed; the password is
    the master's (sentinels without auth).
    """
    parts = urlsplit(url)
    credentials, _, hosts = parts.netloc.rpartition("@")
    username, _, password = credentials.partition(":")
    nodes = []
    for host in hosts.split(","):
        name, _, port = host.rpartition(":") if ":" in host else (host, "", "26379")
        nodes.append((name, int(port)))
    service, _, db = parts.path.strip("/").partition("/")
    if not service or not nodes:
        raise ValueError(
            f"a Sentinel URL needs hosts and a service name: {SENTINEL}host:26379/mymaster"
        )
    sentinel = Sentinel(  # type: ignore[no-untyped-call]
        nodes, socket_timeout=timeout, socket_connect_timeout=timeout
    )
    master: Redis = sentinel.master_for(
        service,
        db=int(db or 0),
        username=unquote(username) or None,
        password=unquote(password) or None,
        **_options(timeout),
    )
    return master
