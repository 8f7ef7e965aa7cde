"""Durable runs: one event log under every protocol (see docs/durable-runs.md).

A detached run (a background Response, an A2A task, an MCP task, an IBM ACP
async run) is a resource with a record and an ordered event log
(:mod:`.log`); every update it yields is an event (:mod:`.events`), so each
protocol's stream is a view that replays the log from a position and
follows it. :class:`DurableRuns` (:mod:`.runner`) runs records in tasks of
their own, holds their leases with a shared log, and takes over the runs of
a replica that died, from their last finished step (:mod:`.steps`).
"""

from agenthost.adapters.durable.events import Discarded, LoggedError, LoggedUpdate
from agenthost.adapters.durable.log import LocalRunLog, RunLog, RunRecord
from agenthost.adapters.durable.runner import DurableRuns, Followed, RunKind

__all__ = [
    "Discarded",
    "DurableRuns",
    "Followed",
    "LocalRunLog",
    "LoggedError",
    "LoggedUpdate",
    "RunKind",
    "RunLog",
    "RunRecord",
]
