"""Per-principal fairness against ``agenthost serve``: one key cannot take the server.

The slow-body lockout of issue 17 (one key's connections each sending a POST
head and a body byte a second), bounded: a connection cap of 40, 80 attacking
connections, 5 s. Before the fix every /healthz probe got 503.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.app.slow_bodies import lockout
from tests.app.test_server import agenthost_serve

pytestmark = pytest.mark.slow

ALICE, BOB = "alice-key-0123456789", "bob-key-0123456789ab"
KEYS = {
    "AGENTHOST_API_KEYS": f"alice:{ALICE},bob:{BOB}",
    "AGENTHOST_ACCESS_LOG": "false",
    "AGENTHOST_ADAPTERS": "openai",  # only /v1 is used: a faster start
}


def test_one_keys_slow_bodies_cannot_lock_out_another_key_or_the_probes(tmp_path: Path) -> None:
    env = {
        **KEYS,
        "AGENTHOST_MAX_CONNECTIONS": "40",
        "AGENTHOST_BODY_TIMEOUT": "60",  # only the connection cap may end a slow body here
        "AGENTHOST_MAX_REQUESTS_PER_PRINCIPAL": "0",  # the cap's own policy, alone
    }
    with agenthost_serve(tmp_path, **env) as (_, url):
        health, bob, opened = lockout(url, ALICE, BOB, connections=80, seconds=5)
    assert health.sent >= 5 and health.statuses == {"200": health.sent}
    assert bob.sent >= 5 and bob.statuses == {"200": bob.sent}
    assert opened > 80  # the attacker's slow bodies were dropped (and reopened)


def slow_body(port: int, key: str | None) -> socket.socket:
    """A connection that sent a POST head (with ``key``) and one byte of its body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    sock.sendall(
        (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n{auth}"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        ).encode()
    )
    return sock


def answer(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {
        **KEYS,
        "AGENTHOST_BODY_TIMEOUT": "60",
        "AGENTHOST_MAX_REQUESTS_PER_PRINCIPAL": "3",
        "AGENTHOST_MAX_CONNECTIONS_PER_CLIENT": "6",
    }
    with agenthost_serve(tmp_path_factory.mktemp("capped"), **env) as (_, url):
        yield url


def settled(url: str) -> None:
    """A round trip, so the server has read the heads sent before it."""
    assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200


def test_a_principal_past_its_in_flight_cap_gets_429_and_others_are_served(capped: str) -> None:
    port = int(capped.rsplit(":", 1)[1])
    with ExitStack() as stack:
        for _ in range(3):
            stack.enter_context(slow_body(port, ALICE))
        settled(capped)
        with slow_body(port, ALICE) as fourth:
            reply = answer(fourth)
        assert reply.startswith(b"HTTP/1.1 429 ")
        assert b"retry-after: 1" in reply.lower()
        assert b'"code":"too_many_requests"' in reply  # the OpenAI error shape on /v1
        served = httpx.post(
            f"{capped}/v1/chat/completions",
            json={"model": "echo", "messages": [{"role": "user", "content": "hi"}]},
            headers={"Authorization": f"Bearer {BOB}"},
            timeout=10,
        )
        assert served.status_code == 200
    # Once alice's requests end, she is served again.
    settled(capped)
    with slow_body(port, ALICE) as again:
        again.sendall(b" " * 999)
        assert answer_head(again).startswith(b"HTTP/1.1 400 ")  # '{ ...' is not JSON: served


def answer_head(sock: socket.socket) -> bytes:
    return sock.recv(65536)


def test_one_address_past_its_connection_cap_gets_429(capped: str) -> None:
    port = int(capped.rsplit(":", 1)[1])
    with ExitStack() as stack:
        for key in (ALICE, BOB) * 3:  # six busy connections, three per key: none idle
            stack.enter_context(slow_body(port, key))
        # A seventh connection: none of the six is idle, so it is refused.
        refused = httpx.get(f"{capped}/healthz", timeout=10)
        assert refused.status_code == 429
        assert refused.text == "too many connections from this address"
    settled(capped)  # the six closed: room again
