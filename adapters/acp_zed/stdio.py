"""Serve one agent over stdio: JSON-RPC on stdout, everything else on stderr.

A stray ``print`` or a native library writing to file descriptor 1 would
corrupt the protocol stream, so the real stdout is kept on a private
descriptor for the protocol alone, and descriptor 1 (and ``sys.stdout``)
are pointed at stderr before anything else runs.
"""

from __future__ import annotations

import os
import sys
from contextlib import AbstractAsyncContextManager
from typing import IO, Any, cast

from acp import run_agent
from acp.interfaces import Agent as ACPAgent

from agenthost.adapters.acp_zed.agent import ZedAgent
from agenthost.adapters.acp_zed.streams import open_streams
from agenthost.agents import ANONYMOUS, Agent, MemoryManager

# Prompts may embed whole files (Zed's @-mentions): allow long lines.
LINE_LIMIT = 50 * 1024 * 1024


def claim_stdout() -> IO[bytes]:
    """Keep the real stdout for the protocol; send fd 1 and ``sys.stdout`` to stderr."""
    sys.stdout.flush()
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_out


async def serve_stdio(
    agent: Agent,
    memory: MemoryManager,
    protocol_out: IO[bytes],
    resources: AbstractAsyncContextManager[Any],
    *,
    version: str = "0",
    principal: str = ANONYMOUS,
) -> None:
    """Serve ``agent`` until the client closes stdin; ``resources`` (the host's agents,
    tools and stores) span the serving."""
    reader, writer = await open_streams(sys.stdin, protocol_out, limit=LINE_LIMIT)
    async with resources:
        # ZedAgent implements what agenthost serves; the router answers
        # "method not found" for the rest of the protocol's methods.
        await run_agent(
            cast(ACPAgent, ZedAgent(agent, memory, version=version, principal=principal)),
            writer,
            reader,
        )
