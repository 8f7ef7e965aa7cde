"""What the host serving an agent gives it when it is made: bounds and observers.

A :class:`Hosting` is made by the host before its agents, and each agent
(and, through the agent's requests, its model) is built with it: the
server's default run limits, the live runs its shutdown interrupts, and
what watches the runs, tool calls and upstream requests (metrics, traces).
Nothing is assigned into a built agent afterwards. An agent built without
one (a script, a test) runs with its own limits only, watched by nobody.

An agent built elsewhere is served through :meth:`BaseAgent.served
<agenthost.agents.agent.BaseAgent.served>`, which returns a copy made under
the hosting and leaves the caller's object as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agenthost.agents.limits import LiveRuns, RunBound, RunLimits

if TYPE_CHECKING:
    from agenthost.agents.observe import AgentObserver, UpstreamObserver
    from agenthost.agents.tools.events import ToolHooks


@dataclass(frozen=True, slots=True)
class Hosting:
    """The server's default limits (an agent's own ``limits`` win), the registry of live
    runs its shutdown interrupts, and what watches its agents."""

    defaults: RunLimits = field(default_factory=RunLimits)
    runs: LiveRuns | None = None
    observer: AgentObserver | None = None
    """What watches the runs, tool calls and upstream requests: see :mod:`agents.observe`."""

    def bound(self, own: RunLimits, agent: str = "", conversation: str | None = None) -> RunBound:
        """A bound for one run of agent ``agent`` with ``own`` limits, in the session
        ``conversation`` (its id, for the observer) if any."""
        observer = (self.observer, agent, conversation) if self.observer is not None else None
        return RunBound(self.defaults.merged(own), self.runs, observer)

    def tool_hooks(self, agent: str) -> tuple[ToolHooks, ...]:
        """The hooks watching ``agent``'s tool calls (after the agent's own)."""
        return () if self.observer is None else tuple(self.observer.tool_hooks(agent))

    def upstream_observer(self, agent: str) -> UpstreamObserver | None:
        """What watches the requests of ``agent``'s model."""
        return None if self.observer is None else self.observer.upstream_observer(agent)


UNHOSTED = Hosting()
"""An agent no host serves: its own limits only, no observer."""
