"""The slow-body lockout (issue 17, point 4), bounded: for the tests and the report.

One key opens many connections, each sending a POST head and then one body
byte a second, and reopens whatever the server closes; meanwhile ``/healthz``
is probed and a second key sends real requests.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from dataclasses import dataclass, field

import httpx


@dataclass
class Tally:
    """Requests sent and how many failed (not 200, or no answer in time)."""

    sent: int = 0
    failed: int = 0
    statuses: dict[str, int] = field(default_factory=dict)

    def count(self, outcome: str) -> None:
        self.sent += 1
        self.statuses[outcome] = self.statuses.get(outcome, 0) + 1
        if outcome != "200":
            self.failed += 1


def _head(key: str) -> bytes:
    return (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100000\r\n\r\n"
    ).encode()


def trickle(port: int, key: str, connections: int, stop: threading.Event) -> int:
    """Hold up to ``connections`` slow bodies until ``stop``; returns the connections opened."""
    opened = 0
    held: list[socket.socket] = []
    try:
        while not stop.is_set():
            while len(held) < connections and not stop.is_set():
                try:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=2)
                    sock.sendall(_head(key) + b"{")
                except OSError:
                    break
                sock.setblocking(False)
                held.append(sock)
                opened += 1
            stop.wait(1.0)  # the attack's pace: one byte a second per connection
            readable, _, _ = select.select(held, [], [], 0)
            for sock in held[:]:
                try:
                    if sock in readable:
                        raise OSError("answered or closed by the server")
                    sock.send(b" ")
                except OSError:
                    sock.close()
                    held.remove(sock)
    finally:
        for sock in held:
            sock.close()
    return opened


def lockout(
    url: str, attacker_key: str, other_key: str, *, connections: int, seconds: float
) -> tuple[Tally, Tally, int]:
    """Run the attack for ``seconds``: ``(healthz probes, other key's requests, opened)``."""
    port = int(url.rsplit(":", 1)[1])
    stop = threading.Event()
    opened: list[int] = []
    attacker = threading.Thread(
        target=lambda: opened.append(trickle(port, attacker_key, connections, stop))
    )
    attacker.start()
    health, other = Tally(), Tally()
    body = {"model": "echo", "messages": [{"role": "user", "content": "hi"}]}
    try:
        stop.wait(2.0)  # let the attacker fill the server first
        deadline = time.monotonic() + seconds
        # A new connection per request, as kubelet's probes open: a kept-alive one
        # may be the longest-idle connection the cap closes, and a request sent as it
        # closes fails (a race of keep-alive itself, not the lockout under test).
        fresh = httpx.Limits(max_keepalive_connections=0)
        with httpx.Client(timeout=3, limits=fresh) as client:
            while time.monotonic() < deadline:
                for tally, send in (
                    (health, lambda: client.get(f"{url}/healthz")),
                    (
                        other,
                        lambda: client.post(
                            f"{url}/v1/chat/completions",
                            json=body,
                            headers={"Authorization": f"Bearer {other_key}"},
                        ),
                    ),
                ):
                    try:
                        tally.count(str(send().status_code))
                    except httpx.HTTPError as exc:
                        tally.count(type(exc).__name__)
                stop.wait(0.2)
    finally:
        stop.set()
        attacker.join(timeout=30)
    return health, other, opened[0] if opened else 0
