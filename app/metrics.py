"""Prometheus metrics of one host: runs, tokens, tools, upstream requests and sessions,
and the process's own (memory, CPU, file descriptors, garbage collection).

Each :class:`Metrics` has a registry of its own (never the process-wide
default), so several apps in one process (tests) do not collide. Every
label value is bounded: agent names come from the config, tool names from
the config plus at most :data:`MAX_DYNAMIC_TOOLS` listed by tool servers,
protocols from :data:`PROTOCOLS`; anything else reads ``other``. A client
naming 10,000 agents that do not exist adds no series.

The hot path: a run costs a handful of dictionary lookups and counter
increments (the labelled children are cached per protocol and agent), and a
streamed run's pieces of text cost one boolean test each (in
:class:`~agenthost.agents.limits.RunBound`).
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
    start_http_server,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response

from agenthost.agents import Agent, ChatAgent, ErrorKind, RunResult, kind_of
from agenthost.agents.tools import ToolEvent
from agenthost.app.protocols import ADAPTERS, STDIO_ONLY
from agenthost.app.settings import Settings

METRICS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
"""Set (by app/workers.py) when several worker processes serve one port."""
PROTOCOLS = frozenset((*ADAPTERS, *STDIO_ONLY))
OTHER = "other"
MAX_DYNAMIC_TOOLS = 200
"""Tool names not in the config (listed by MCP tool servers) get series up to this many."""

current_protocol: ContextVar[str] = ContextVar("agenthost_protocol", default=OTHER)
"""The protocol serving the current request (set by the app per request and per
adapter lifespan, so tasks an adapter spawns inherit it)."""

_CLIENT = frozenset(
    {ErrorKind.BAD_INPUT, ErrorKind.NOT_FOUND, ErrorKind.REFUSED, ErrorKind.LIMIT_EXCEEDED}
)
# Seconds: a run is a model call or several; a first token comes sooner.
_RUN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_TTFT_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_TOOL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def outcome_of(error: BaseException | None) -> str:
    """``ok``, ``client_error``, ``server_error`` or ``cancelled`` for a run's end."""
    if error is None:
        return "ok"
    if isinstance(error, Exception):
        kind = kind_of(error)
        if kind is ErrorKind.CANCELLED:
            return "cancelled"
        return "client_error" if kind in _CLIENT else "server_error"
    return "cancelled"  # CancelledError, GeneratorExit: the caller stopped the run


class Metrics:
    """The metrics of one host; ``agents`` and ``tools`` are the names labels may carry."""

    def __init__(self, agents: Iterable[str] = (), tools: Iterable[str] = ()) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=False)
        # Under `serve --workers N` (app/workers.py) the counters, histograms and gauges below
        # keep their values in per-process files, and a scrape sums every worker's.
        self.scrape_registry = registry
        if directory := os.environ.get(METRICS_DIR_VARIABLE):
            self.scrape_registry = CollectorRegistry(auto_describe=False)
            MultiProcessCollector(self.scrape_registry, path=directory)  # type: ignore[no-untyped-call]
        # The process's own series (process_resident_memory_bytes, process_cpu_seconds_total,
        # open fds; python_gc_*, python_info), read at scrape time: nothing on the hot path.
        for collector in (
            ProcessCollector(registry=registry),
            PlatformCollector(registry=registry),
            GCCollector(registry=registry),
        ):
            self._scrape_too(collector)
        self.agents = frozenset(agents)
        self._tools = set(tools)
        self._dynamic_tools = 0
        pa, a = ["protocol", "agent"], ["agent"]
        self.requests = Counter(
            "agenthost_requests",
            "Runs of an agent by protocol and outcome (ok, client_error, server_error, cancelled).",
            [*pa, "outcome"],
            registry=registry,
        )
        self.duration = Histogram(
            "agenthost_request_duration_seconds",
            "Duration of a run, from its start to its result or error.",
            pa,
            buckets=_RUN_BUCKETS,
            registry=registry,
        )
        self.ttft = Histogram(
            "agenthost_time_to_first_token_seconds",
            "Time from a streamed run's start to its first piece of text.",
            pa,
            buckets=_TTFT_BUCKETS,
            registry=registry,
        )
        self.active = Gauge(
            "agenthost_active_runs",
            "Runs in progress.",
            pa,
            registry=registry,
            multiprocess_mode="livesum",  # with workers: the live workers' sum
        )
        self.tokens = Counter(
            "agenthost_tokens",
            "Tokens of finished runs, as the model reported them (direction: input, output).",
            [*a, "direction"],
            registry=registry,
        )
        self.tool_calls = Counter(
            "agenthost_tool_calls",
            "Calls of an agent's own tools, by final outcome (ok, error).",
            [*a, "tool", "outcome"],
            registry=registry,
        )
        self.tool_duration = Histogram(
            "agenthost_tool_duration_seconds",
            "Duration of a tool call, every attempt included.",
            ["tool"],
            buckets=_TOOL_BUCKETS,
            registry=registry,
        )
        self.upstream = Counter(
            "agenthost_upstream_requests",
            "Requests to an upstream model server, each retry counted (outcome: ok, "
            "rate_limited, error).",
            [*a, "outcome"],
            registry=registry,
        )
        self.quota_refusals = Counter(
            "agenthost_quota_refusals",
            "Requests refused with 429 for a principal's quota (quota: requests_per_minute, "
            "concurrent_runs, tokens_per_day).",
            ["quota"],
            registry=registry,
        )
        for quota in ("requests_per_minute", "concurrent_runs", "tokens_per_day"):
            self.quota_refusals.labels(quota)  # every series from the start, at 0
        self._series: dict[tuple[str, str], _RunSeries] = {}

    def agent(self, name: str) -> str:
        """The label value for agent ``name``."""
        return name if name in self.agents else OTHER

    def tool(self, name: str) -> str:
        """The label value for tool ``name`` (a new name while there is room)."""
        if name in self._tools:
            return name
        if self._dynamic_tools < MAX_DYNAMIC_TOOLS:
            self._dynamic_tools += 1
            self._tools.add(name)
            return name
        return OTHER

    def quota_refused(self, quota: str) -> None:
        """Count a refusal for ``quota`` (app/quotas.py)."""
        self.quota_refusals.labels(quota).inc()

    def watch_sessions(self, memories: Callable[[], Sequence[Any]]) -> None:
        """Report the sizes and evictions of the stores ``memories()`` returns at scrape
        time (those with ``size`` and ``evictions``; by the protocol their namespace
        starts with)."""
        self._scraped(_SessionCollector(memories))

    def watch_stores(self, stores: Callable[[], Sequence[tuple[str, str, Any]]]) -> None:
        """Report, at scrape time, the evictions of the bounded stores ``stores()`` returns,
        as ``(protocol, store name, store)`` with an int ``evictions`` (A2A tasks, ACP runs)."""
        self._scraped(_StoreCollector(stores))

    def watch_loop(self, watchdog: Callable[[], Any]) -> None:
        """Report, at scrape time, the event loop stalls of the
        :class:`~agenthost.app.watchdog.LoopWatchdog` ``watchdog()`` returns (None: off)."""
        self._scraped(_LoopCollector(watchdog))

    def _scraped(self, collector: Collector) -> None:
        """Add a collector read at scrape time (this process's, even under workers)."""
        self.registry.register(collector)
        self._scrape_too(collector)

    def _scrape_too(self, collector: Collector) -> None:
        if self.scrape_registry is not self.registry:
            self.scrape_registry.register(collector)

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return generate_latest(self.scrape_registry)

    # RunObserver
    def run_started(self, agent: str, conversation: str | None = None) -> _Run:
        protocol = current_protocol.get()
        key = (protocol, agent)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = _RunSeries(self, protocol, agent)
        return _Run(series)

    # AgentObserver: asked once per agent as it is built, so its label is found per event
    # (the host names its agents, :meth:`watch_agents`, once they are all built).
    def tool_hooks(self, agent: str) -> tuple[ToolMetrics]:
        """The tool hook that counts the calls of ``agent``'s tools."""
        return (ToolMetrics(self, agent),)

    def upstream_observer(self, agent: str) -> UpstreamMetrics:
        """What counts the upstream requests of ``agent``'s model."""
        return UpstreamMetrics(self, agent)

    def watch_agents(self, agents: Mapping[str, Agent]) -> None:
        """Label ``agents`` by name (any other agent reads ``other``), and the tools their
        chat agents are built with."""
        self.agents = self.agents | frozenset(agents)
        for agent in agents.values():
            if isinstance(agent, ChatAgent):
                for tool in agent.options.tools or ():
                    self.tool(tool.name)


class _RunSeries:
    """The labelled children of one (protocol, agent), looked up once."""

    __slots__ = (
        "active",
        "agent",
        "duration",
        "input",
        "metrics",
        "ok",
        "output",
        "protocol",
        "ttft",
    )

    def __init__(self, metrics: Metrics, protocol: str, agent: str) -> None:
        self.metrics = metrics
        self.protocol = protocol = protocol if protocol in PROTOCOLS else OTHER
        self.agent = agent = metrics.agent(agent)
        self.active = metrics.active.labels(protocol, agent)
        self.duration = metrics.duration.labels(protocol, agent)
        self.ttft = metrics.ttft.labels(protocol, agent)
        self.input = metrics.tokens.labels(agent, "input")
        self.output = metrics.tokens.labels(agent, "output")
        self.ok = metrics.requests.labels(protocol, agent, "ok")  # the common outcome


class _Run:
    """One run being watched (a :class:`~agenthost.agents.observe.RunProbe`)."""

    __slots__ = ("series", "start")

    def __init__(self, series: _RunSeries) -> None:
        self.series = series
        self.start = time.perf_counter()
        series.active.inc()

    def first_text(self) -> None:
        self.series.ttft.observe(time.perf_counter() - self.start)

    def finished(self, result: RunResult | None, error: BaseException | None) -> None:
        series = self.series
        series.active.dec()
        series.duration.observe(time.perf_counter() - self.start)
        if result is None:
            outcome = outcome_of(error)
            series.metrics.requests.labels(series.protocol, series.agent, outcome).inc()
        else:
            series.ok.inc()
            series.input.inc(result.usage.input_tokens)
            series.output.inc(result.usage.output_tokens)


class ToolMetrics:
    """A tool hook (:class:`~agenthost.agents.tools.ToolHooks`) counting one agent's calls."""

    def __init__(self, metrics: Metrics, agent: str) -> None:
        self.metrics = metrics
        self.agent = agent

    async def on_tool_event(self, event: ToolEvent) -> None:
        if event.kind != "finish":
            return
        metrics = self.metrics
        tool = metrics.tool(event.tool)
        outcome = "error" if event.error is not None else "ok"
        metrics.tool_calls.labels(metrics.agent(self.agent), tool, outcome).inc()
        metrics.tool_duration.labels(tool).observe(event.elapsed)


class UpstreamMetrics:
    """An :class:`~agenthost.agents.observe.UpstreamObserver` for one agent's model."""

    def __init__(self, metrics: Metrics, agent: str) -> None:
        self.metrics = metrics
        self.agent = agent

    def upstream_request(self, outcome: str) -> None:
        metrics = self.metrics
        metrics.upstream.labels(metrics.agent(self.agent), outcome).inc()

    def model_call(self, model: str, params: dict[str, Any]) -> None:
        return None  # counted per request above


class _SessionCollector(Collector):
    def __init__(self, memories: Callable[[], Sequence[Any]]) -> None:
        self.memories = memories

    def collect(self) -> Iterator[Metric]:
        sizes: dict[str, float] = {}
        evictions: dict[str, float] = {}
        for memory in self.memories():
            size, evicted = getattr(memory, "size", None), getattr(memory, "evictions", None)
            if not isinstance(size, int) or not isinstance(evicted, int):
                continue  # a store that cannot tell (Redis: the server knows)
            protocol = str(getattr(memory, "namespace", "")).split("-")[0]
            protocol = protocol if protocol in PROTOCOLS else OTHER
            sizes[protocol] = sizes.get(protocol, 0) + size
            evictions[protocol] = evictions.get(protocol, 0) + evicted
        gauge = GaugeMetricFamily(
            "agenthost_sessions", "Sessions held in process.", labels=["protocol"]
        )
        counter = CounterMetricFamily(
            "agenthost_session_evictions",
            "Sessions dropped for room or idleness.",
            labels=["protocol"],
        )
        for protocol, size in sizes.items():
            gauge.add_metric([protocol], size)
            counter.add_metric([protocol], evictions[protocol])
        yield gauge
        yield counter


class _StoreCollector(Collector):
    def __init__(self, stores: Callable[[], Sequence[tuple[str, str, Any]]]) -> None:
        self.stores = stores

    def collect(self) -> Iterator[Metric]:
        totals: dict[tuple[str, str], float] = {}
        for protocol, name, store in self.stores():
            key = (protocol if protocol in PROTOCOLS else OTHER, name)
            totals[key] = totals.get(key, 0) + int(getattr(store, "evictions", 0))
        counter = CounterMetricFamily(
            "agenthost_store_evictions",
            "A2A tasks and push configs, IBM ACP runs dropped for room (bytes or count) or age.",
            labels=["protocol", "store"],
        )
        for (protocol, name), value in totals.items():
            counter.add_metric([protocol, name], value)
        yield counter


class _LoopCollector(Collector):
    def __init__(self, watchdog: Callable[[], Any]) -> None:
        self.watchdog = watchdog

    def collect(self) -> Iterator[Metric]:
        watchdog = self.watchdog()
        if watchdog is None:
            return
        stalls = CounterMetricFamily(
            "agenthost_loop_stalls",
            "Event loop stalls over the watchdog's threshold, by cause: blocked (by our code, "
            "logged), starved (the process was short of CPU).",
            labels=["cause"],
        )
        seconds = CounterMetricFamily(
            "agenthost_loop_stall_seconds",
            "Time the event loop lost to those stalls, by cause.",
            labels=["cause"],
        )
        for cause, count in watchdog.counts.items():
            stalls.add_metric([cause], count)
            seconds.add_metric([cause], watchdog.seconds[cause])
        yield stalls
        yield seconds


def metrics_endpoint(metrics: Metrics) -> Callable[[Request], Any]:
    """The ``GET /metrics`` route of ``metrics``."""

    async def endpoint(request: Request) -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    return endpoint


@asynccontextmanager
async def serve_metrics_port(metrics: Metrics | None, settings: Settings) -> AsyncIterator[None]:
    """``settings.metrics_port`` serving only the metrics (no keys) while inside; 0: none."""
    if metrics is None or not settings.metrics_port:
        yield
        return
    server, thread = start_http_server(
        settings.metrics_port, settings.host, registry=metrics.scrape_registry
    )
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
