"""Header values with spaces around them, through a raw socket (uvicorn's own parser).

HTTP's optional whitespace around a field value is not part of it; uvicorn's
httptools parser keeps trailing spaces, and the SDK compares the 2026-07-28
routing headers (``Mcp-Method``, ``Mcp-Name``) with the body byte for byte.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from agenthost.agents import ChatAgent
from agenthost.agents.models import EchoModel
from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import mcp_settings
from tests.upstream import serve_in_thread

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture(scope="module")
def address() -> Iterator[tuple[str, int]]:
    app = create_app(mcp_settings(), {"echo": ChatAgent("echo", EchoModel())})
    with serve_in_thread(app, lifespan=True) as url:
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None
        yield parts.hostname, parts.port


def exchange(address: tuple[str, int], head: str, body: bytes) -> tuple[str, str]:
    """Send one request as written; the status line and the body of the answer."""
    request = head.replace("\n", "\r\n") + f"Content-Length: {len(body)}\r\n\r\n"
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(request.encode() + body)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    status, _, rest = received.decode().partition("\r\n")
    return status, rest.partition("\r\n\r\n")[2]


@pytest.mark.parametrize("pad", ["   ", "\t", " \t "])
def test_routing_headers_with_spaces_around_their_values_are_accepted(
    address: tuple[str, int], pad: str
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi"}, "_meta": META},
    }
    head = (
        "POST /mcp HTTP/1.1\n"
        f"Host: localhost\n"
        "Connection: close\n"
        "Accept: application/json, text/event-stream\n"
        "Content-Type: application/json\n"
        f"Mcp-Protocol-Version:{pad}2026-07-28{pad}\n"
        f"Mcp-Method: tools/call{pad}\n"
        f"Mcp-Name: echo{pad}\n"
    )
    status, answer = exchange(address, head, json.dumps(body).encode())
    assert " 200 " in status, (status, answer)
    assert '"hi"' in answer and "error" not in answer, answer


def test_a_name_that_differs_beyond_spaces_is_still_refused(address: tuple[str, int]) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "hi"}, "_meta": META},
    }
    head = (
        "POST /mcp HTTP/1.1\n"
        "Host: localhost\n"
        "Connection: close\n"
        "Accept: application/json, text/event-stream\n"
        "Content-Type: application/json\n"
        "Mcp-Protocol-Version: 2026-07-28\n"
        "Mcp-Method: tools/call\n"
        "Mcp-Name: ec ho  \n"
    )
    status, answer = exchange(address, head, json.dumps(body).encode())
    assert " 400 " in status, (status, answer)
    assert "-32020" in answer, answer
