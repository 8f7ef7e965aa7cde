"""One host behind every entry point: ``serve``, ``mcp-stdio`` and ``acp-stdio``.

The host owns what an agent needs whichever protocol serves it: the
settings, the registry and who may use each agent, the session stores
(made here, closed here), the shared resources (MCP tool-server
connections), the agents' lifespans, the run limits and the live runs a
shutdown interrupts. The HTTP app (:mod:`agenthost.app.server`) and the
stdio commands are thin layers over it, so an agent behaves the same over
all of them.

Lifecycle: build the host (loads and checks the config), build the adapters
it serves (:meth:`Host.adapter`), then run everything inside
:meth:`Host.running`, which enters resources, then agents, then adapters,
and on exit closes them in reverse and then the stores.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from agenthost.adapters.base import Adapter, AdapterContext, HasBoundedStores, Principal
from agenthost.adapters.body_limits import BodyLimits, use_limits
from agenthost.adapters.durable import DurableRuns, LocalRunLog, RunLog
from agenthost.agents import Agent, MemoryManager
from agenthost.agents.hosting import Hosting
from agenthost.agents.limits import LiveRuns, RunLimits
from agenthost.agents.observe import AgentObserver, current_tracing
from agenthost.app.build import hosted, load_agents
from agenthost.app.guards import BodyBudget
from agenthost.app.identity import InvalidToken
from agenthost.app.memory import LRUMemoryManager, memory_factory
from agenthost.app.metrics import Metrics, current_protocol, serve_metrics_port
from agenthost.app.principals import check_allow
from agenthost.app.protocols import ADAPTERS, package
from agenthost.app.quotas import QuotaObserver, build_quotas
from agenthost.app.settings import Settings
from agenthost.app.shared_sessions import NAMESPACE as SHARED_NAMESPACE
from agenthost.app.shared_sessions import SessionRouter, shared_agents
from agenthost.app.watchdog import LoopWatchdog, watch_loop

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from agenthost.app.tracing import Tracing

logger = logging.getLogger("agenthost")


class Host:
    """The agents of one config, served under one set of settings."""

    def __init__(
        self,
        settings: Settings | None = None,
        agents: Mapping[str, Agent] | None = None,
        *,
        allow: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        """``agents`` default to those of ``settings.config``; ``allow`` to the registry's.

        The host's bounds and observers (:attr:`hosting`) are made first: the
        config's agents are built under them, and agents built elsewhere are
        served as copies made under them (the objects given are left as they were).
        """
        self.settings = settings = settings or Settings()
        use_limits(body_limits(settings))
        self.runs = LiveRuns()
        self.metrics = Metrics() if settings.metrics else None
        self.tracing = _tracing()
        self._memory_for = memory_factory(
            settings.session_max,
            settings.session_ttl,
            store=settings.session_store,
            timeout=settings.store_timeout,
        )
        self._memories: list[MemoryManager] = []
        # One count of the body bytes in flight: HTTP bodies' (app/middleware.py) and
        # adapters' WebSocket messages' (AdapterContext.body_bytes).
        self.body_budget = BodyBudget(
            max_in_flight_bytes=settings.max_body_bytes_in_flight,
            max_owner_bytes=settings.max_body_bytes_per_principal,
        )
        self.quotas = build_quotas(
            settings,
            self.metrics.quota_refused if self.metrics else None,
            shared=self._shared_client,  # the session store's Redis client, if Redis
        )
        # Traces wrap the metrics here, whatever order anything else happens in.
        observer: AgentObserver | None = self.metrics
        if self.quotas is not None and self.quotas.observes_runs:
            observer = QuotaObserver(self.quotas, observer)  # runs' tokens and slots
        observer = self.tracing.observer(observer) if self.tracing is not None else observer
        limits = RunLimits(settings.max_output_chars, settings.max_run_seconds)
        self.hosting = Hosting(limits, self.runs, observer)
        if agents is None:
            _, agents = load_agents(settings.config, self.hosting)
        self.registry = hosted(agents, self.hosting)
        self.allow = self.registry.allow if allow is None else allow
        self.principals = settings.principals()
        self.tokens = settings.token_validator()
        check_allow(self.allow, self.principals, tokens=self.tokens is not None)
        if self.quotas is not None:
            self.quotas.check_principals(self.principals.values())
        if not self.auth and self.allow:
            logger.warning(
                "auth off: agents with an allow list (%s) are served to nobody but 'anonymous'",
                ", ".join(self.allow),
            )
        self.shared_sessions = shared_agents(
            list(self.registry), settings.sessions, self.registry.sessions
        )
        self._common: MemoryManager | None = None
        # (protocol, its adapter's bounded_stores): A2A tasks, ACP runs, for their evictions.
        self._bounded: list[tuple[str, Callable[[], list[tuple[str, Any]]]]] = []
        if self.metrics is not None:
            self.metrics.watch_agents(self.registry)
            self.metrics.watch_sessions(lambda: self._memories)
            self.metrics.watch_stores(
                lambda: [
                    (p, name, store) for p, stores in self._bounded for name, store in stores()
                ]
            )
            self.metrics.watch_loop(lambda: self.watchdog)
        self.watchdog: LoopWatchdog | None = None
        self.durable = DurableRuns(
            self._run_log(),
            lease_seconds=settings.run_lease_seconds,
            not_durable=self.registry.not_durable,
        )

    @property
    def auth(self) -> bool:
        """Whether callers must authenticate (API keys or OIDC tokens configured)."""
        return bool(self.principals) or self.tokens is not None

    def principal_for_credential(self, credential: str) -> str | None:
        """A bearer credential's principal, without I/O: an API key's, or a token's whose
        signing key is already fetched (transports of an adapter's own: gRPC)."""
        if (name := self.principals.get(credential)) is not None:
            return name
        if self.tokens is None:
            return None
        try:
            identity = self.tokens.validate_cached(credential)
        except InvalidToken:
            return None
        return Principal(identity.principal, identity.grants, identity.tenant)

    async def principal_for_token(self, credential: str) -> str | None:
        """A token's principal, fetching the issuer's keys if it names a new one."""
        if self.tokens is None or credential in self.principals:
            return None
        try:
            identity = await self.tokens.validate(credential)
        except InvalidToken:
            return None
        return Principal(identity.principal, identity.grants, identity.tenant)

    def _run_log(self) -> RunLog:
        """The run log: in this process, or in the shared session store's Redis."""
        settings = self.settings
        if settings.session_store == "memory":
            return LocalRunLog(settings.run_log_max_bytes)
        from agenthost.app.redis_memory import RedisMemoryManager
        from agenthost.app.redis_runs import RedisRunLog

        memory = self.new_memory("runs")  # its client, closed with the stores
        assert isinstance(memory, RedisMemoryManager)

        return RedisRunLog(
            memory.client,
            retention=settings.run_retention_seconds or settings.session_ttl,
            timeout=settings.store_timeout,
            max_bytes=settings.run_log_max_bytes,
        )

    def _shared_client(self) -> Redis:
        """The Redis client of the shared session store (closed with the stores)."""
        from agenthost.app.redis_memory import RedisMemoryManager

        memory = self.new_memory("quotas")
        assert isinstance(memory, RedisMemoryManager)
        return memory.client

    def new_memory(self, namespace: str) -> MemoryManager:
        """A bounded session store of the settings' size, closed when the host stops."""
        memory = self._memory_for(namespace)
        if isinstance(memory, LRUMemoryManager):
            memory.max_bytes = self.settings.session_max_bytes
        self._memories.append(memory)
        return memory

    def sessions_of(self, protocol: str) -> MemoryManager:
        """``protocol``'s session store; with shared conversations, routed through the common one
        (:mod:`agenthost.app.shared_sessions`)."""
        own = self.new_memory(protocol)
        if not self.shared_sessions:
            return own
        if self._common is None:
            self._common = self.new_memory(SHARED_NAMESPACE)
        return SessionRouter(own, self._common, self.shared_sessions, protocol)

    def context(self, protocol: str, *, prefix: str = "") -> AdapterContext:
        """What an adapter of ``protocol`` gets: the agents exposed over it, its own
        per-agent options and config section, and the settings all protocols share."""
        served = list(dict.fromkeys(self.settings.adapters))
        settings = self.settings
        return AdapterContext(
            self.registry.exposed_by(protocol),
            self.sessions_of(protocol),
            self.allow,
            self.new_memory,
            self.registry.skills,
            prefix=prefix,
            principal_for_key=self.principal_for_credential if self.auth else None,
            principal_for_token=self.principal_for_token if self.tokens else None,
            token_issuer=self.tokens.issuer if self.tokens else None,
            protocols={
                name: [p for p in served if name in self.registry.exposed_by(p)]
                for name in self.registry
            },
            shared_sessions=self.shared_sessions,
            agent_options=self.registry.options_for(protocol),
            config=self.registry.sections.get(protocol),
            lease_seconds=settings.run_lease_seconds,
            max_body_bytes=settings.max_body_bytes,
            keepalive_seconds=settings.stream_keepalive_seconds,
            durable=self.durable,
            quota=self.quotas.admit_call if self.quotas is not None and self.auth else None,
            body_bytes=self.body_budget,
        )

    def adapter(self, protocol: str) -> Adapter:
        """The HTTP adapter of ``protocol``, made with its own settings.

        Raises ImportError (naming the extra) when the protocol's extra is missing.
        """
        context = self.context(protocol, prefix=ADAPTERS[protocol].prefix)
        adapter = package(protocol).create(context, self.settings.protocol(protocol))
        # Stores bounded in bytes besides the sessions (A2A tasks, ACP runs): their evictions.
        if isinstance(adapter, HasBoundedStores):
            self._bounded.append((protocol, adapter.bounded_stores))
        return adapter

    @asynccontextmanager
    async def running(self, adapters: Iterable[Adapter] = ()) -> AsyncIterator[None]:
        """Shared resources, then agents, then ``adapters`` are up inside; all closed after."""
        async with AsyncExitStack() as stack:
            stack.push_async_callback(self._close_memories)
            if self.quotas is not None:
                stack.push_async_callback(self.quotas.store.aclose)
            if self.tokens is not None:
                # The issuer's keys, fetched at start beside the rest: the first token does
                # not wait for them, and an issuer that cannot be reached is logged now.
                prefetch = asyncio.create_task(self.tokens.keys.prefetch(), name="jwks-prefetch")
                stack.callback(prefetch.cancel)
                if self.tokens.introspector is not None:
                    stack.push_async_callback(self.tokens.introspector.aclose)
            await stack.enter_async_context(serve_metrics_port(self.metrics, self.settings))
            if self.tracing is not None:
                stack.callback(self.tracing.shutdown)
                # What runs inside (adapters' servers, stdio commands) carries trace context.
                stack.callback(current_tracing.reset, current_tracing.set(self.tracing))
            await stack.enter_async_context(self._durable_runs())
            for resource in self.registry.resources:
                await stack.enter_async_context(resource.lifespan())
            for agent in self.registry.values():
                await stack.enter_async_context(agent.lifespan())
            for adapter in adapters:
                # What an adapter's lifespan starts (its own servers, task groups)
                # inherits its protocol, for the metrics.
                token = current_protocol.set(adapter.name)
                try:
                    await stack.enter_async_context(adapter.lifespan())
                finally:
                    current_protocol.reset(token)
            # Started last, so the start-up work (imports, connections) is no stall.
            self.watchdog = await stack.enter_async_context(
                watch_loop(self.settings.loop_stall_seconds)
            )
            yield

    @asynccontextmanager
    async def _durable_runs(self) -> AsyncIterator[None]:
        """The run log's writer and the watch for orphaned runs; on the way out, this
        replica's runs handed over (shared log) or ended."""
        log = self.durable.log
        await log.start()
        watch = asyncio.create_task(self.durable.watch(), name="orphaned-runs")
        try:
            yield
        finally:
            watch.cancel()
            await self.durable.stop(self.settings.graceful_shutdown_seconds)
            await log.aclose()

    async def store_health(self) -> dict[str, str]:
        """``{"session_store": "up" | "down"}`` for a shared store; empty for the in-process one.

        Readiness: a replica whose shared store has never answered is not
        ready (503); one whose store went away later stays in rotation, so
        stateless requests go on while stateful ones get "unavailable".
        """
        ping = getattr(self._memories[0], "ping", None) if self._memories else None
        if ping is None:
            return {}
        up = bool(await ping())
        self.store_seen_up = self.store_seen_up or up
        return {"session_store": "up" if up else "down"}

    store_seen_up = False
    """Whether the shared session store has answered since start."""

    async def _close_memories(self) -> None:
        for memory in self._memories:
            await memory.aclose()

    def interrupt_runs(self, reason: str) -> int:
        """End every run still going with ``reason``; returns how many there were."""
        return self.runs.interrupt_all(reason)


def _tracing() -> Tracing | None:
    """Traces when the environment asks for them (``OTEL_TRACES_EXPORTER=otlp``); else
    OpenTelemetry is not even imported."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    exporters = {e.strip() for e in os.environ.get("OTEL_TRACES_EXPORTER", "").split(",")}
    if not exporters & {"otlp", "console"}:
        return None
    from agenthost.app.tracing import Tracing

    return Tracing()


def body_limits(settings: Settings) -> BodyLimits:
    """The bounds on JSON request bodies that ``settings`` set."""
    return BodyLimits(
        max_values=settings.max_json_values,
        max_keys=settings.max_json_keys,
        max_depth=settings.max_json_depth,
        max_string=settings.max_json_string,
        offload_bytes=settings.body_offload_bytes,
        workers=settings.body_workers,
    )
