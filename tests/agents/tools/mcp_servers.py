"""The test MCP server as a real process: over stdio, or over HTTP on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from agenthost.agents.tools.mcp import HTTPServer, StdioServer
from tests.upstream import free_port

ROOT = Path(__file__).resolve().parents[3]
MODULE = "tests.agents.tools.mcp_server"

STDIO = StdioServer(sys.executable, ("-m", MODULE, "stdio"), cwd=str(ROOT))


class HTTPServerProcess:
    """``python -m tests.agents.tools.mcp_server http PORT``; stop and start it again at will."""

    def __init__(self, token: str | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.token = token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.server = HTTPServer(self.url, headers)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30) -> None:
        command = [sys.executable, "-m", MODULE, "http", str(self.port)]
        self.process = subprocess.Popen([*command, *([self.token] if self.token else [])], cwd=ROOT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("the test MCP server exited")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the test MCP server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None
