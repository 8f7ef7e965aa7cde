"""State bounded in bytes: many 3.5 MB requests on every store at once, against a served process.

Responses (stored), conversations, A2A tasks, IBM ACP runs and MCP sessions,
each with a small byte budget: the process's RSS grows by less than the sum
of the budgets plus a stated overhead (what the allocator keeps of the
requests' transient copies). Without byte budgets the same requests grow RSS
by about 2.2 times what they send (the input and the echoed answer are kept):
~1.1 GB for 30 requests per store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.app.large_requests import MiB, flood, rss
from tests.app.test_server import agenthost_serve

pytestmark = pytest.mark.slow

BUDGET = 8 * MiB
# Byte-bounded in-process stores: /v1 responses and conversations, A2A sessions,
# tasks and push configs, ACP sessions and runs, MCP sessions.
STORES = 8
OVERHEAD = 256 * MiB
PER_STORE = 20  # 70 MB sent to each store: well over its budget


def test_many_large_requests_on_every_store_keep_rss_under_the_budgets(tmp_path: Path) -> None:
    env = {
        "AGENTHOST_ACCESS_LOG": "false",
        "AGENTHOST_LOOP_STALL_SECONDS": "0",
        "AGENTHOST_MAX_OUTPUT_CHARS": str(8 * MiB),  # the echoed 3.5 MB is kept too
        "AGENTHOST_SESSION_MAX_BYTES": str(BUDGET),
        "AGENTHOST_A2A_TASK_MAX_BYTES": str(BUDGET),
        "AGENTHOST_ACP_MAX_RUN_BYTES": str(BUDGET),
        # One client sends them all at once: the stores' budgets are measured, not its own.
        "AGENTHOST_MAX_BODY_BYTES_PER_PRINCIPAL": "0",
    }
    with agenthost_serve(tmp_path, **env) as (process, url):
        before, _ = rss(process.pid)
        statuses = asyncio.run(flood(url, size=int(3.5 * MiB), per_store=PER_STORE, concurrency=2))
        after, peak = rss(process.pid)
    assert statuses == {store: {200: PER_STORE} for store in statuses} and len(statuses) == 5
    grown = after - before
    assert grown < STORES * BUDGET + OVERHEAD, f"RSS grew {grown // MiB} MiB (peak {peak // MiB})"
