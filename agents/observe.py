"""What an observer (metrics, traces) sees of runs and upstream model requests.

The runtime knows nothing of Prometheus or OpenTelemetry: it calls these
small protocols, which the app implements (:mod:`agenthost.app.metrics`).
With no observer (the default) nothing is called at all. Observers are given
to an agent when it is made (:class:`~agenthost.agents.hosting.Hosting`),
and an agent hands its upstream observer to its model with each request
(:attr:`~agenthost.agents.models.base.ModelRequest.observer`), never
assigned into a built object.

Lifecycle of one run: :meth:`RunObserver.run_started` when the run's work
begins (the first wait on its updates, or on its result), then
:meth:`RunProbe.first_text` at most once (a streamed run's first piece of
text), then :meth:`RunProbe.finished` exactly once, with the result or the
error, or with neither when the caller closed the run before its end (a
client gone, a cancel). Hooks must not raise and must not await.

Trace context in and out (:class:`TraceHooks`): a surface that is not an HTTP
request (a gRPC call, an MCP request's ``_meta``) wraps its work in
:func:`incoming`; a call going out (an MCP tool server, a push webhook) adds
:func:`outgoing`'s W3C headers. Both do nothing unless the app's tracing set
:data:`current_tracing` (per HTTP request, and around the adapters' lifespans).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from agenthost.agents.results import RunResult

if TYPE_CHECKING:
    from agenthost.agents.models.base import ModelResponse
    from agenthost.agents.tools.events import ToolHooks


class RunProbe(Protocol):
    """Watches one run."""

    def first_text(self) -> None: ...

    def finished(self, result: RunResult | None, error: BaseException | None) -> None: ...


class ScopedRunProbe(RunProbe, Protocol):
    """A probe that is the current context while the run works (a trace span): every
    wait for the run's next update or result runs between :meth:`attach` and
    :meth:`detach`, in one task, so spans the run starts (tools, sub-agents) nest."""

    def attach(self) -> object: ...

    def detach(self, token: object) -> None: ...


class RunObserver(Protocol):
    """Watches every run of the agents built under it (through ``Hosting``)."""

    def run_started(self, agent: str, conversation: str | None = None) -> RunProbe:
        """A run of ``agent`` begins, in the session ``conversation`` (its id) if any."""
        ...


class ModelCallProbe(Protocol):
    """Watches one model call (every retry of it included)."""

    headers: dict[str, str]
    """Headers to send upstream with it (W3C ``traceparent``)."""

    def finished(self, response: ModelResponse | None, error: BaseException | None) -> None: ...


class UpstreamObserver(Protocol):
    """Watches each request to an upstream model server, every retry included."""

    def upstream_request(self, outcome: str) -> None:
        """``outcome``: ``ok``, ``rate_limited`` (a 429) or ``error``."""
        ...

    def model_call(self, model: str, params: dict[str, Any]) -> ModelCallProbe | None:
        """A call of ``model`` with the request body ``params`` begins (None: not watched)."""
        ...


class AgentObserver(RunObserver, Protocol):
    """Everything a host watches of the agents it serves (metrics, traces): their runs,
    and per agent its tool calls and its model's upstream requests.

    Given to each agent when it is made (through
    :class:`~agenthost.agents.hosting.Hosting`): the per-agent methods are called then,
    once per agent, never per run.
    """

    def tool_hooks(self, agent: str) -> Sequence[ToolHooks]:
        """The hooks that watch the tool calls of ``agent``."""
        ...

    def upstream_observer(self, agent: str) -> UpstreamObserver | None:
        """What watches the model requests of ``agent`` (None: not watched)."""
        ...


class TraceHooks(Protocol):
    """Trace context across protocols (the app's tracing implements it)."""

    def server_call(
        self, name: str, carrier: Mapping[str, Any], attributes: Mapping[str, Any]
    ) -> AbstractContextManager[None]:
        """A ``SERVER`` span current inside, its parent from ``carrier``'s ``traceparent``
        (else the current span)."""
        ...

    def outgoing(self) -> dict[str, str]:
        """The W3C headers (``traceparent``) of the current span, for a call going out."""
        ...


current_tracing: ContextVar[TraceHooks | None] = ContextVar("agenthost_tracing", default=None)
"""The tracing of the host serving the current request (None: tracing off)."""


def incoming(
    name: str, carrier: Mapping[str, Any], **attributes: Any
) -> AbstractContextManager[None]:
    """Work of a request named ``name`` whose trace context ``carrier`` carries."""
    hooks = current_tracing.get()
    return nullcontext() if hooks is None else hooks.server_call(name, carrier, attributes)


def outgoing() -> dict[str, str]:
    """Headers carrying the current trace context out (empty when tracing is off)."""
    hooks = current_tracing.get()
    return {} if hooks is None else hooks.outgoing()
