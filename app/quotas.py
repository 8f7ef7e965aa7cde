"""Quotas per principal: requests a minute, runs at once, model tokens a UTC day.

The limits: the settings' defaults (``AGENTHOST_QUOTA_*``, 0 = none), which a
YAML file (``AGENTHOST_QUOTAS_FILE``) may override, for every principal
(``default:``) and per principal (``principals:``; a field not given there is
the default's)::

    default: {requests_per_minute: 120}
    principals:
      batch: {requests_per_minute: 600, concurrent_runs: 4, tokens_per_day: 2000000}
    tenants:
      acme: {requests_per_minute: 1000, tokens_per_day: 5000000}

A tenant's limits (``tenants:``; a field not given there is unlimited) hold
all its principals (``acme/NAME``) together, on one set of counters
(``tenant:acme``), besides each principal's own: a request passes only if
both let it in, and counts on both.

The counters are in this process, or in Redis when the session store is
(:mod:`agenthost.app.quota_store`), so every replica enforces one quota.

:class:`QuotaGuard`, a pure ASGI middleware inside the API key guard (which
names the principal), counts every request of a principal but those of the
public paths (health, metrics, discovery); a request that starts a run (a
``POST`` with a body: not a cancel or a resubscription) is also refused once
the principal's tokens of the day are spent, and holds one of its run slots
until its response ends and the runs it started end (a detached one, a
background Response or a task, keeps it). A refusal is 429 in the path's
protocol shape with ``Retry-After``: when the rate lets the next request in,
in a second for a run slot, at the next UTC midnight for tokens;
``x-should-retry`` tells the OpenAI and Anthropic SDKs to retry after it,
except for tokens. :class:`QuotaObserver`, given to the agents as an
observer, counts the tokens of each finished run against the principal of
the request it ran in, and keeps the slots of the runs in progress.

The store failing lets requests through (logged), and all of them for
:data:`OUTAGE_SECONDS` without trying it: an outage of Redis neither stops
the service nor adds the store's time-out to every request.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import math
import time
import uuid
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.types import ASGIApp, Receive, Scope, Send

from agenthost.adapters.base import Principal
from agenthost.agents.observe import AgentObserver, RunProbe, UpstreamObserver
from agenthost.agents.results import RunResult
from agenthost.agents.tools.events import ToolHooks
from agenthost.app.config import ConfigError
from agenthost.app.guards import ErrorFor
from agenthost.app.quota_store import Ask, LocalQuotaStore, QuotaStore, RedisQuotaStore
from agenthost.app.settings import Settings

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger("agenthost")

OUTAGE_SECONDS = 5.0
"""After the store failed, requests pass unchecked this long before it is tried again."""

current_principal: ContextVar[str | None] = ContextVar("agenthost_quota_principal", default=None)
"""The principal whose request the current run serves (set by :class:`QuotaGuard`)."""


class Limits(BaseModel):
    """One principal's limits; 0 (or absent) = unlimited."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests_per_minute: int = Field(0, ge=0)
    concurrent_runs: int = Field(0, ge=0)
    tokens_per_day: int = Field(0, ge=0)


class _PartialLimits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    requests_per_minute: int | None = Field(None, ge=0)
    concurrent_runs: int | None = Field(None, ge=0)
    tokens_per_day: int | None = Field(None, ge=0)

    def over(self, base: Limits) -> Limits:
        return base.model_copy(update=self.model_dump(exclude_none=True))


class QuotasFile(BaseModel):
    """The quotas file."""

    model_config = ConfigDict(extra="forbid")

    default: _PartialLimits = Field(default_factory=_PartialLimits)
    principals: dict[str, _PartialLimits] = Field(default_factory=dict)
    tenants: dict[str, _PartialLimits] = Field(default_factory=dict)


class QuotaError(ConfigError):
    """The quotas file cannot be used."""


def read_quotas_file(
    path: Path, defaults: Limits
) -> tuple[Limits, dict[str, Limits], dict[str, Limits]]:
    """The default limits, each principal's (over ``defaults``) and each tenant's (over
    none), from ``path``."""
    try:
        with path.open(encoding="utf-8") as stream:  # YAML errors then name the file
            raw = yaml.safe_load(stream) or {}
        parsed = QuotasFile.model_validate(raw)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise QuotaError(f"the quotas file {path}: {exc}") from exc
    default = parsed.default.over(defaults)
    principals = {name: limits.over(default) for name, limits in parsed.principals.items()}
    tenants = {name: limits.over(Limits()) for name, limits in parsed.tenants.items()}
    return default, principals, tenants


class Quotas:
    """The limits of every principal and their counters."""

    def __init__(
        self,
        default: Limits,
        store: QuotaStore | None = None,
        principals: Mapping[str, Limits] | None = None,
        refused: Callable[[str], None] | None = None,
        tenants: Mapping[str, Limits] | None = None,
    ) -> None:
        """``refused(quota)`` counts each refusal (the metrics); ``tenants``: each tenant's
        limits, on counters all its principals share."""
        self.default = default
        self.refused = refused
        self.principals = dict(principals or {})
        self.tenants = {
            name: limits for name, limits in (tenants or {}).items() if limits != Limits()
        }
        self.store: QuotaStore = store if store is not None else LocalQuotaStore()
        self._down_until = 0.0  # the store failed: requests pass without it until then
        every = [default, *self.principals.values(), *self.tenants.values()]
        self.observes_runs = any(
            limits.tokens_per_day or limits.concurrent_runs for limits in every
        )
        self.enabled = any(limits != Limits() for limits in every)

    def of(self, principal: str) -> Limits:
        """A principal's limits: its own (``TENANT/NAME`` first, then the bare name), else the
        default; its counters are always its own (``TENANT/NAME``)."""
        limits = self.principals.get(principal)
        if limits is None and isinstance(principal, Principal):
            limits = self.principals.get(principal.name)
        return self.default if limits is None else limits

    def tenant_of(self, principal: str) -> tuple[str, Limits] | None:
        """The counters' name (``tenant:NAME``) and the limits of ``principal``'s tenant, if
        it has limits of its own."""
        tenant = principal.tenant if isinstance(principal, Principal) else None
        limits = self.tenants.get(tenant) if tenant is not None else None
        return None if limits is None else (f"tenant:{tenant}", limits)

    def counts_tokens(self, principal: str) -> bool:
        """Whether ``principal``'s tokens count (against its budget or its tenant's)."""
        tenant = self.tenant_of(principal)
        return bool(self.of(principal).tokens_per_day or (tenant and tenant[1].tokens_per_day))

    def holds_runs(self, principal: str) -> bool:
        """Whether ``principal``'s runs hold slots (its runs-at-once quota or its tenant's)."""
        tenant = self.tenant_of(principal)
        return bool(self.of(principal).concurrent_runs or (tenant and tenant[1].concurrent_runs))

    async def add_tokens(self, principal: str, tokens: int) -> None:
        tenant = self.tenant_of(principal)
        try:
            if self.of(principal).tokens_per_day:
                await self.store.add_tokens(principal, today(), tokens)
            if tenant is not None and tenant[1].tokens_per_day:
                await self.store.add_tokens(tenant[0], today(), tokens)
        except Exception:
            logger.warning("quotas: could not count %d tokens of %s", tokens, principal)

    def store_down(self) -> bool:
        """Whether the store failed less than :data:`OUTAGE_SECONDS` ago (requests pass)."""
        return self._down_until > time.monotonic()

    def store_failed(self, principal: str) -> None:
        """The store failed on ``principal``'s request: it passes, and so do all requests for
        :data:`OUTAGE_SECONDS` (each would wait for the store's time-out)."""
        logger.warning(
            "quotas: the store failed; %s's request and all for %g s pass unchecked",
            principal,
            OUTAGE_SECONDS,
        )
        self._down_until = time.monotonic() + OUTAGE_SECONDS

    async def check(self, principal: str, starts_run: bool, run: str = "") -> Refusal | None:
        """Why ``principal``'s request may not go on (None: it may, and it counts against the
        rate; one that starts a run holds the run slot ``run`` if given and limited)."""
        limits = self.of(principal)
        ask = _ask(limits, starts_run, run)
        tenant = self.tenant_of(principal)
        tenant_ask = None if tenant is None else (tenant[0], _ask(tenant[1], starts_run, run))
        if ask == Ask() and (tenant_ask is None or tenant_ask[1] == Ask()):
            return None
        refused = await self.store.admit(principal, today(), ask, tenant_ask)
        if refused is None:
            return None
        quota, wait = refused
        whose = "principal"
        if quota.startswith("tenant:"):
            assert tenant is not None
            quota, whose, limits = quota.removeprefix("tenant:"), "tenant", tenant[1]
        if quota == "tokens_per_day":
            message = (
                f"this {whose} used its {limits.tokens_per_day} model tokens of the day "
                "(UTC); more runs from the next UTC midnight"
            )
            return Refusal(quota, message, seconds_to_midnight())
        if quota == "concurrent_runs":
            message = f"over this {whose}'s {limits.concurrent_runs} runs at once"
            return Refusal(quota, message, 1.0)
        message = f"over this {whose}'s {limits.requests_per_minute} requests a minute"
        return Refusal(quota, message, wait)

    async def admit_call(self, principal: str, starts_run: bool) -> tuple[str, float] | None:
        """A :data:`~agenthost.adapters.base.CallQuota` (gRPC calls): the run slots are not
        held there; a call let in serves ``principal`` (its runs' tokens count against it)."""
        refusal = None
        if not self.store_down():
            try:
                refusal = await self.check(principal, starts_run)
            except Exception:
                self.store_failed(principal)
        if refusal is None:
            current_principal.set(principal)  # the call's own task: its runs inherit it
            return None
        if self.refused is not None:
            self.refused(refusal.quota)
        return refusal.message, refusal.retry_after

    async def give_back(self, slot: RunSlot) -> None:
        """Give ``slot`` back if it is held."""
        if slot.held:
            slot.held = False
            await self.release(slot)

    async def release(self, slot: RunSlot) -> None:
        """Give back ``slot`` in the store (marked not held already)."""
        tenant = self.tenant_of(slot.principal)
        try:
            if self.of(slot.principal).concurrent_runs:
                await self.store.give_back_run(slot.principal, slot.run)
            if tenant is not None and tenant[1].concurrent_runs:
                await self.store.give_back_run(tenant[0], slot.run)
        except Exception:
            logger.warning("quotas: could not give back a run slot of %s", slot.principal)

    async def hold(self, slot: RunSlot) -> None:
        """Hold ``slot`` in the store again (marked held already), whatever the limit: a
        detached run its request started, after the request had answered and given it back."""
        mine = Ask(runs=2**31, run=slot.run) if self.of(slot.principal).concurrent_runs else Ask()
        tenant = self.tenant_of(slot.principal)
        theirs = None
        if tenant is not None and tenant[1].concurrent_runs:
            theirs = (tenant[0], Ask(runs=2**31, run=slot.run))
        try:
            await self.store.admit(slot.principal, today(), mine, theirs)
        except Exception:
            logger.warning("quotas: could not hold a run slot of %s", slot.principal)

    def check_principals(self, known: Iterable[str]) -> None:
        """Warn of quotas given to principals no API key names (a typo in the file); a
        token's principals (``oidc:<sub>``) cannot be known before their first request."""
        names = {*known, *(p.name for p in known if isinstance(p, Principal))}  # tenants' too
        unknown = sorted(p for p in set(self.principals) - names if ":" not in p)
        if unknown:
            logger.warning("quotas for principals no API key names: %s", ", ".join(unknown))


def _ask(limits: Limits, starts_run: bool, run: str) -> Ask:
    """What a request asks of counters under ``limits``."""
    if not starts_run:
        return Ask(rate=limits.requests_per_minute)
    runs = limits.concurrent_runs if run else 0
    return Ask(limits.requests_per_minute, limits.tokens_per_day, runs, run if runs else "")


def today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


def seconds_to_midnight() -> float:
    now = dt.datetime.now(dt.UTC)
    midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
    return (midnight - now).total_seconds()


@dataclass(slots=True, eq=False)
class RunSlot:
    """One of a principal's run slots, taken by the request that starts the runs: held
    until the request has answered and the runs it started (a detached one too) ended."""

    principal: str
    run: str
    runs: int = 0
    """Runs in progress under it."""
    request_open: bool = True
    held: bool = True


current_slot: ContextVar[RunSlot | None] = ContextVar("agenthost_quota_slot", default=None)
"""The run slot of the request the current run serves (set by :class:`QuotaGuard`)."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: which quota, a message, the seconds until it may retry."""

    quota: str
    message: str
    retry_after: float


class QuotaGuard:
    """429 with ``Retry-After`` past a principal's quota (see the module's docstring).

    ``exempt`` paths (and those ending with ``exempt_suffixes``) are not counted;
    ``bodyless(path)`` is true of the ``POST`` paths that start no run.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        quotas: Quotas,
        error_for: ErrorFor,
        exempt: Iterable[str] = (),
        exempt_suffixes: tuple[str, ...] = (),
        bodyless: Callable[[str], object] | None = None,
    ) -> None:
        self.app = app
        self.quotas = quotas
        self.error_for = error_for
        self.exempt = frozenset(exempt)
        self.exempt_suffixes = exempt_suffixes
        self.bodyless = bodyless

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get("state", {}).get("principal") if scope["type"] == "http" else None
        path = scope["path"] if principal is not None else ""
        if (
            principal is None
            or path in self.exempt
            or path.endswith(self.exempt_suffixes)
            or self.quotas.store_down()
        ):
            await self.app(scope, receive, send)
            return
        quotas = self.quotas
        starts_run = scope["method"] == "POST" and not (self.bodyless and self.bodyless(path))
        slot = (
            RunSlot(principal, uuid.uuid4().hex)
            if starts_run and quotas.holds_runs(principal)
            else None
        )
        try:
            refusal = await quotas.check(principal, starts_run, slot.run if slot else "")
        except Exception:
            quotas.store_failed(principal)
            refusal, slot = None, None
        if refusal is not None:
            await self._refuse(scope, receive, send, refusal)
            return
        token = current_principal.set(principal)
        held = current_slot.set(slot)
        try:
            await self.app(scope, receive, send)
        finally:
            current_slot.reset(held)
            current_principal.reset(token)
            if slot is not None:
                slot.request_open = False
                if not slot.runs:  # else the last of its runs gives it back
                    await quotas.give_back(slot)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
        if self.quotas.refused is not None:
            self.quotas.refused(refusal.quota)
        response = self.error_for(
            scope["path"], 429, f"{refusal.message}; retry later", "rate_limit_exceeded"
        )
        response.headers["retry-after"] = str(max(1, math.ceil(refusal.retry_after)))
        # The OpenAI and Anthropic SDKs obey it: retry after Retry-After, but not for hours.
        retry = refusal.quota != "tokens_per_day"
        response.headers["x-should-retry"] = "true" if retry else "false"
        response.headers["connection"] = "close"  # its body is never read
        await response(scope, receive, send)


class QuotaObserver:
    """An observer of runs for the quotas, telling ``inner`` (metrics) everything too: each
    finished run's tokens count against the principal of the request it ran in, and a run
    keeps that request's run slot held until it ends (a detached run outlives its request)."""

    def __init__(self, quotas: Quotas, inner: AgentObserver | None) -> None:
        self.quotas = quotas
        self.inner = inner
        self._pending: set[asyncio.Task[None]] = set()  # store updates, until they end

    def run_started(self, agent: str, conversation: str | None = None) -> RunProbe:
        inner = self.inner.run_started(agent, conversation) if self.inner is not None else None
        slot = current_slot.get()
        if slot is not None:
            slot.runs += 1
            if not slot.held:  # marked now: the store follows in order
                slot.held = True
                self.spawn(self.quotas.hold(slot))
        return _ObservedRun(self, current_principal.get(), slot, inner)

    def tool_hooks(self, agent: str) -> Sequence[ToolHooks]:
        return () if self.inner is None else self.inner.tool_hooks(agent)

    def upstream_observer(self, agent: str) -> UpstreamObserver | None:
        return None if self.inner is None else self.inner.upstream_observer(agent)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` (a store update) without waiting for it: hooks do not await."""
        task = asyncio.get_running_loop().create_task(work)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)


class _ObservedRun:
    __slots__ = ("inner", "observer", "principal", "slot")

    def __init__(
        self,
        observer: QuotaObserver,
        principal: str | None,
        slot: RunSlot | None,
        inner: RunProbe | None,
    ) -> None:
        self.observer = observer
        self.principal = principal
        self.slot = slot
        self.inner = inner

    def first_text(self) -> None:
        if self.inner is not None:
            self.inner.first_text()

    def finished(self, result: RunResult | None, error: BaseException | None) -> None:
        if self.inner is not None:
            self.inner.finished(result, error)
        observer, slot = self.observer, self.slot
        principal = self.principal
        if result is not None and principal and observer.quotas.counts_tokens(principal):
            tokens = result.usage.input_tokens + result.usage.output_tokens
            if tokens:
                observer.spawn(observer.quotas.add_tokens(principal, tokens))
        if slot is not None:
            slot.runs -= 1
            if not slot.runs and not slot.request_open and slot.held:
                slot.held = False
                observer.spawn(observer.quotas.release(slot))


def check_quotas_file(settings: Settings) -> None:
    """Raise :class:`QuotaError` if the settings' quotas file cannot be used."""
    if settings.quotas_file is not None:
        read_quotas_file(settings.quotas_file, Limits())


def build_quotas(
    settings: Settings,
    refused: Callable[[str], None] | None = None,
    *,
    shared: Callable[[], Redis] | None = None,
) -> Quotas | None:
    """The quotas ``settings`` set (None: none), counted in Redis when the session store is:
    on ``shared()``'s client (the session store's), else on a client of their own."""
    defaults = Limits(
        requests_per_minute=settings.quota_requests_per_minute,
        concurrent_runs=settings.quota_concurrent_runs,
        tokens_per_day=settings.quota_tokens_per_day,
    )
    default, principals, tenants = defaults, dict[str, Limits](), dict[str, Limits]()
    if settings.quotas_file is not None:
        default, principals, tenants = read_quotas_file(settings.quotas_file, defaults)
    if not any(limits != Limits() for limits in (default, *principals.values(), *tenants.values())):
        return None
    store: QuotaStore = LocalQuotaStore()
    if settings.session_store != "memory":  # Redis, imported only then
        from agenthost.app.redis_client import is_redis_url, redis_client

        if is_redis_url(settings.session_store):  # else the session store's error says why
            timeout = settings.store_timeout
            if shared is not None:
                store = RedisQuotaStore(shared(), timeout=timeout, owns_client=False)
            else:
                client = redis_client(settings.session_store, timeout=timeout)
                store = RedisQuotaStore(client, timeout=timeout)
    return Quotas(default, store, principals, refused, tenants)
