"""Settings from the environment (prefix ``AGENTHOST_``); CLI flags override them.

:class:`Settings` holds what the whole process shares, and each protocol's own
settings, which its adapter package declares (``AGENTHOST_<PROTOCOL>_<FIELD>``,
:attr:`agenthost.adapters.base.AdapterPackage.Settings`), assembled from the
:data:`~agenthost.app.protocols.ADAPTERS` table: ``settings.protocol("a2a")``.
Code may give a protocol's setting by its flat name, as the environment does:
``Settings(a2a_grpc_port=50051)`` is ``AGENTHOST_A2A_GRPC_PORT=50051``.
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, PrivateAttr, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from agenthost.adapters.setting_values import split_commas
from agenthost.app.principals import KeysError, build_principals, read_keys_file_lines
from agenthost.app.protocols import ADAPTERS, AdapterName, package

if TYPE_CHECKING:
    from agenthost.app.identity.tokens import TokenValidator

PREFIX = "AGENTHOST_"
SESSION_STORE_SCHEMES = ("redis://", "rediss://", "unix://", "redis+sentinel://")
"""The URLs of a shared session store (app/redis_client.py connects to each)."""

PROTOCOL_SETTINGS: Mapping[str, type[BaseSettings]] = {
    name: package(name).Settings for name in ADAPTERS
}
"""Each served-over-HTTP protocol's own settings model, from its adapter package."""

OTHER_VARIABLES = (
    "AGENTHOST_POD_IP",
    # compose.yaml / compose.scale.yaml, read by Compose on the host, never by the server
    "AGENTHOST_IMAGE",
    "AGENTHOST_PUBLISH",
    "AGENTHOST_SCALE_PUBLISH",
    "AGENTHOST_API_KEYS_SECRET",
    "AGENTHOST_POSTGRES_PASSWORD",
    "AGENTHOST_REDIS_IMAGE",
    "AGENTHOST_POSTGRES_IMAGE",
    "AGENTHOST_NGINX_IMAGE",
    # the repository's own test switches (.ci/run, docs/development.md)
    "AGENTHOST_REQUIRE_CONFORMANCE",
    "AGENTHOST_REQUIRE_DOCKER",
)
"""``AGENTHOST_`` variables that are not settings, so no warning names them: the Helm
chart's pod address (which ``AGENTHOST_ALLOWED_HOSTS`` refers to), the variables the
compose files read on the host (a shell that ran ``docker compose`` may still export
them), and the test suite's switches."""

logger = logging.getLogger("agenthost")


def _check_prefixes() -> None:
    for name, model in PROTOCOL_SETTINGS.items():
        prefix = model.model_config.get("env_prefix")
        if prefix != f"{PREFIX}{name.upper()}_":
            raise TypeError(
                f"{model.__module__}.Settings: env_prefix must be {PREFIX}{name.upper()}_"
            )


_check_prefixes()


class Settings(BaseSettings):
    """Everything about the process that is not an agent definition."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="forbid")

    _protocols: dict[str, BaseSettings] = PrivateAttr(default_factory=dict)

    def __init__(self, **values: Any) -> None:
        """``values`` override the environment; ``<protocol>_<field>`` ones go to that
        protocol's settings (an unknown field of a protocol is refused, as any other)."""
        own: dict[str, dict[str, Any]] = {name: {} for name in PROTOCOL_SETTINGS}
        for key in list(values):
            protocol = _protocol_of(key)
            if protocol is not None:
                own[protocol][key.removeprefix(f"{protocol}_")] = values.pop(key)
        super().__init__(**values)
        self._protocols = {name: model(**own[name]) for name, model in PROTOCOL_SETTINGS.items()}

    def protocol(self, name: str) -> BaseSettings:
        """The settings of protocol ``name`` (its adapter package's ``Settings``)."""
        return self.protocols[name]

    @property
    def protocols(self) -> Mapping[str, BaseSettings]:
        """Every protocol's settings, by protocol name."""
        if not self._protocols:  # made without __init__ (model_validate): from the environment
            self._protocols = {name: model() for name, model in PROTOCOL_SETTINGS.items()}
        return self._protocols

    config: Path = Field(Path("config/agents.yaml"), description="The agents' YAML file.")
    host: str = Field("127.0.0.1", description="Address to bind.")
    port: int = Field(8000, ge=0, le=65535, description="Port to listen on.")
    workers: Annotated[int, Field(ge=1, le=256)] | Literal["auto"] = Field(
        1,
        description="Processes serving the port (`agenthost serve`), each with every agent: "
        "'auto' is one per CPU this process may use (its affinity and cgroup quota). More than "
        "one needs the state shared (AGENTHOST_SESSION_STORE=redis://…, AGENTHOST_A2A_TASK_STORE "
        "a database when A2A is served, MCP stateless) as several replicas do.",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info", description="Least level of the log lines written."
    )
    access_log: bool = Field(
        True,
        description="One log line per request at info level (costs ~50 µs of CPU a request).",
    )

    adapters: Annotated[list[AdapterName], NoDecode] = Field(
        default_factory=lambda: list(ADAPTERS),
        description="Protocols to serve, comma-separated. Unset: every protocol whose extra "
        "is installed (the others are skipped with a warning); set: exactly these, and a "
        "missing extra stops start-up. A protocol not served is not imported: serving "
        "`openai` alone starts in about half the CPU time and memory.",
    )
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Accepted API keys, comma-separated, each 'name:KEY' (the name is the "
        "key's principal) or a bare KEY, each key at least 16 characters; unset or empty means "
        "no auth, and a value that lists no key (' ', ' , '), an empty or short key stops "
        "start-up. Checked on every surface (gRPC too) except /healthz, /readyz, /docs, "
        "/redoc, /openapi.json, the playground's page and agent cards.",
    )
    api_keys_file: Path | None = Field(
        None,
        description="A file of API keys, one 'name:KEY' per line ('#' comments), such as a "
        "mounted Secret; adds to AGENTHOST_API_KEYS, same rules. A file with no key stops "
        "start-up.",
    )

    # OpenID Connect bearer tokens (app/identity/, docs/security.md), beside the API keys.
    oidc_issuer: str | None = Field(
        None,
        description="An OpenID Connect issuer URL: JWT bearer tokens it signs are accepted "
        "beside the API keys, on every surface (gRPC too). Its signing keys are found by "
        "discovery (<issuer>/.well-known/openid-configuration → jwks_uri) and cached; a key "
        "rotated in is fetched when a token first names it. Needs AGENTHOST_OIDC_AUDIENCE.",
    )
    oidc_audience: str | None = Field(
        None,
        description="The audience a token must hold in 'aud': this server's public URL "
        "(the MCP resource, e.g. https://agents.example.com/mcp) or an API identifier.",
    )
    oidc_principal_claim: str = Field(
        "sub",
        description="The claim naming a token's principal, which is 'oidc:' plus its value "
        "(an agent's allow list names it so).",
    )
    oidc_scopes_claim: str = Field(
        "scope",
        description="The claim holding a token's scopes, space-separated or a list ('scp' "
        "is read when it is absent); an agent's allow list grants a scope as 'scope:NAME'.",
    )
    oidc_tenant_claim: str | None = Field(
        None,
        description="The claim naming a token's tenant: everything the caller stores is "
        "kept under TENANT/oidc:SUB, apart from other tenants; a token whose claim is not a "
        "tenant name (letters, digits, '.', '_', '@', '-', up to 64, no '/') is refused.",
    )
    oidc_required_scopes: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Scopes every token must hold, comma-separated; a valid token without "
        "one is refused with 403 insufficient_scope (MCP's step-up signal).",
    )
    oidc_introspection_url: str | None = Field(
        None,
        description="The issuer's token introspection endpoint (RFC 7662): a bearer that is "
        "no JWT is checked there (active, issuer, audience), and remembered for up to a "
        "minute. Needs AGENTHOST_OIDC_CLIENT_ID and AGENTHOST_OIDC_CLIENT_SECRET.",
    )
    oidc_client_id: str | None = Field(
        None, description="agenthost's client id at the issuer, for introspection."
    )
    oidc_client_secret: SecretStr | None = Field(
        None, description="agenthost's client secret at the issuer, for introspection."
    )
    oidc_clock_skew_seconds: float = Field(
        30.0, ge=0, le=300, description="Leeway for a token's exp and nbf."
    )
    oidc_jwks_refetch_seconds: float = Field(
        30.0,
        ge=0,
        description="Least time between two fetches of the issuer's keys for unknown key ids "
        "(a flood of made-up key ids costs the issuer one request per interval).",
    )

    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Browser origins allowed to call the API, comma-separated ('*' for any); "
        "empty means no CORS headers. A request with another Origin gets 403 on every surface "
        "(the server's own and loopback origins are always allowed).",
    )

    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host headers every surface accepts besides localhost, 127.0.0.1 and [::1] "
        "and the host of AGENTHOST_A2A_PUBLIC_URL, comma-separated; a name without a port "
        "allows any port, '*' any host. Others get 421 (DNS-rebinding protection). Checked "
        "when the server binds a loopback address or this is set; /healthz and /readyz answer "
        "any Host.",
    )

    session_max: int = Field(
        10_000,
        ge=1,
        description=(
            "Sessions and stored response chains (a response and those continuing it) "
            "kept per protocol (LRU)."
        ),
    )
    session_max_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="Bytes of sessions and stored responses kept per protocol (an estimate: "
        "their text plus ~200 bytes a message); least recently used dropped beyond.",
    )
    session_ttl: float = Field(
        3600.0, gt=0, description="Seconds an idle session is kept (reading it refreshes it)."
    )
    session_store: str = Field(
        "memory",
        description="Where sessions, stored responses, conversations and IBM ACP runs live: "
        "'memory' (this process, LRU) or a Redis URL ('redis://[:password@]host:6379/0', "
        "'rediss://' for TLS, 'redis+sentinel://host:26379,host2:26379/<service>[/db]' for a "
        "Sentinel-managed master), shared by every replica.",
    )
    sessions: Literal["isolated", "shared"] = Field(
        "isolated",
        description="'isolated': each protocol keeps its own conversations (an A2A contextId "
        "and an MCP session_id are never the same conversation). 'shared': one conversation "
        "id names the same conversation of an agent and a principal on every protocol "
        "(OpenAI conv_ id, A2A contextId, MCP session_id, IBM ACP session_id, Zed ACP session "
        "id); an agent's 'sessions:' in config overrides this.",
    )
    stdio_principal: str = Field(
        "anonymous",
        min_length=1,
        description="The principal (API key name) acp-stdio acts as: the sessions it reads and "
        "writes are this principal's. With AGENTHOST_SESSIONS=shared and a shared session store, "
        "an editor then continues the conversations that key started over HTTP.",
    )
    store_timeout: float = Field(
        2.0,
        gt=0,
        description="Seconds one operation on a shared store (Redis) may take, its retries on "
        "a fresh connection included, before the request gets the protocol's 'unavailable' "
        "error.",
    )
    drain_seconds: float = Field(
        0.0,
        ge=0,
        description="On SIGTERM, /readyz turns 503 at once and the server keeps serving this "
        "many seconds before it stops listening (time for Kubernetes to stop routing to it).",
    )
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024, description="Larger bodies get 413.")
    max_body_bytes_in_flight: int = Field(
        128 * 1024 * 1024,
        ge=0,
        description="Request body bytes of every request in flight together (a body counts until "
        "its response ends; a message of the Responses API's WebSocket mode, until it is "
        "parsed). Past it only an API key (or, without one, a client address) holding "
        "less than an equal share of it is let in; the others get 503 with Retry-After, so one key "
        "cannot get another a 503. Memory follows the large bodies in flight (each takes a few "
        "times its size while it runs). One body alone always passes. 0: no bound.",
    )
    max_body_bytes_per_principal: int = Field(
        32 * 1024 * 1024,
        ge=0,
        description="Request body bytes one API key's principal (with auth off, or without a key: "
        "one client address) has in flight at once (a body counts until its response ends; a "
        "message of the Responses API's WebSocket mode, until it is parsed); past it the "
        "request gets 429 with Retry-After (the message, an error event). Its first body always "
        "passes. 0: no bound.",
    )
    send_stall_seconds: float = Field(
        30.0,
        ge=0,
        description="Seconds a client may leave its response unread once the server's send "
        "buffers for it are full (the run waits meanwhile): a client that reads less than 64 KiB "
        "in that time has its connection closed and its run stopped, as on a disconnect. "
        "0: never.",
    )
    # JSON bodies (adapters/body_limits.py): bounds checked before a body is parsed into
    # models or protobuf, each refused with the protocol's own 4xx naming the setting.
    max_json_values: int = Field(
        100_000,
        ge=100,
        description="Values (array elements and object members, nested ones too) in one JSON "
        "request body; more get the protocol's 400.",
    )
    max_json_keys: int = Field(
        10_000, ge=16, description="Members of one object in a JSON request body; more get 400."
    )
    max_json_depth: int = Field(
        64, ge=8, le=1000, description="Nesting of arrays and objects in a JSON request body."
    )
    max_json_string: int = Field(
        8 * 1024 * 1024,
        ge=1024,
        description="Characters in one string (or key) of a JSON request body; more get 400.",
    )
    body_offload_bytes: int = Field(
        64 * 1024,
        ge=0,
        description="Request bodies this large or larger are parsed and converted in a worker "
        "thread, off the event loop (smaller ones inline: a thread hop costs more than their "
        "parse).",
    )
    body_workers: int = Field(
        2, ge=1, description="Threads parsing large request bodies; more bodies wait their turn."
    )

    # Connection limits (app/connections.py); see docs/security.md.
    header_timeout: float = Field(
        10.0, gt=0, description="Seconds a client has to send a request's head (408 after)."
    )
    body_timeout: float = Field(
        60.0, gt=0, description="Seconds a client has to send a request's body (408 after)."
    )
    max_header_bytes: int = Field(
        64 * 1024, ge=1024, description="Largest request head (line + headers); 431 beyond."
    )
    max_headers: int = Field(100, ge=8, description="Most headers in a request; 431 beyond.")
    max_connections: int = Field(
        2048,
        ge=1,
        description="Open connections; past it the longest-idle one is closed (503 if none is).",
    )
    max_connections_per_client: int = Field(
        512,
        ge=0,
        description="Open connections from one client address (before auth); past it that "
        "address's longest-idle one is closed (429 if none is). Behind a proxy every client has "
        "the proxy's address: raise it there. 0: no cap.",
    )
    max_requests_per_principal: int = Field(
        256,
        ge=0,
        description="Requests one API key's principal has in flight at once (a slow body or a "
        "long stream counts until it ends); more get 429 with Retry-After. With auth off, "
        "AGENTHOST_MAX_CONNECTIONS_PER_CLIENT bounds each address instead. 0: no cap.",
    )
    keep_alive_seconds: float = Field(
        5.0, gt=0, description="Seconds an idle kept-alive connection stays open."
    )
    backlog: int = Field(2048, ge=16, description="Connections the kernel queues before accept.")
    run_lease_seconds: float = Field(
        15.0,
        gt=0,
        description="With a shared session store: a detached run's lease (a background "
        "Response, an A2A or MCP task, an IBM ACP run), refreshed every third of it; once it "
        "expired (the replica died) another replica takes the run over within a third of it "
        "and resumes it (docs/durable-runs.md).",
    )
    run_retention_seconds: float | None = Field(
        None,
        gt=0,
        description="Seconds a detached run's record and event log are kept after its last "
        "event (a background Response, an A2A or MCP task, an IBM ACP async run; see "
        "docs/durable-runs.md). Default: AGENTHOST_SESSION_TTL.",
    )
    run_log_max_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024 * 1024,
        description="Bytes of run event logs kept in this process (all of them with "
        "AGENTHOST_SESSION_STORE=memory; the runs this replica runs with Redis); the oldest "
        "finished runs are dropped beyond, a run in progress never is.",
    )
    stream_keepalive_seconds: float = Field(
        15.0,
        ge=0,
        description="Seconds of silence after which every SSE stream (/v1, A2A, MCP, ACP) sends a "
        "keep-alive comment, so that a proxy's or load balancer's read time-out does not cut it "
        "(0: none).",
    )

    # Run limits (agents/limits.py): every agent's default; an agent's `limits:` overrides.
    max_output_chars: int = Field(
        200_000, ge=1, description="Characters of one answer; the run is stopped beyond."
    )
    max_run_seconds: float = Field(
        900.0, gt=0, description="Seconds one run may take; it is stopped beyond."
    )
    graceful_shutdown_seconds: float = Field(
        30.0,
        ge=0,
        description="After SIGTERM (and the drain), seconds for runs to finish; then they end "
        "with an error event and the process exits 0.",
    )
    shutdown_margin_seconds: float = Field(
        8.0,
        ge=0,
        description="After SIGTERM, the drain and the grace time, seconds more for the runs' "
        "last events (up to 5 s) and for closing the stores; a shutdown still going then (a "
        "tool that blocks the event loop, say) is cut: the process exits 1, logging where the "
        "loop was stuck. A second SIGTERM or SIGINT exits at once (128 + the signal).",
    )
    loop_stall_seconds: float = Field(
        0.1,
        ge=0,
        description="The event loop watchdog counts every stall longer than this "
        "(agenthost_loop_stalls_total, by cause) and logs those our code caused, naming the "
        "task that held the loop; 0 turns it off.",
    )

    @field_validator(
        "adapters",
        "api_keys",
        "cors_origins",
        "allowed_hosts",
        "oidc_required_scopes",
        mode="before",
    )
    @classmethod
    def _split_commas(cls, value: object) -> object:
        return split_commas(value)

    @field_validator("session_store")
    @classmethod
    def _known_store(cls, value: str) -> str:
        # Said by `agenthost check` and before start-up, not as a traceback from the
        # lifespan; the value is not repeated (a Redis URL may hold a password).
        if value != "memory" and not value.startswith(SESSION_STORE_SCHEMES):
            schemes = ", ".join(SESSION_STORE_SCHEMES)
            raise ValueError(f"use 'memory' or a Redis URL ({schemes})")
        return value

    def principals(self) -> dict[str, str]:
        """API key → principal name, from ``api_keys`` and ``api_keys_file``; empty = no auth."""
        entries = [
            (f"AGENTHOST_API_KEYS entry {n}", key.get_secret_value())
            for n, key in enumerate(self.api_keys, 1)
        ]
        if self.api_keys_file is not None:
            from_file = read_keys_file_lines(self.api_keys_file)
            if not from_file:
                raise KeysError(f"the API keys file {self.api_keys_file} holds no key")
            entries += [(f"{self.api_keys_file} line {n}", entry) for n, entry in from_file]
        return build_principals(entries)

    def token_validator(self) -> TokenValidator | None:
        """The OIDC token check these settings configure; None: tokens are off."""
        if self.oidc_issuer is None:
            return None
        try:  # PyJWT and httpx: only when tokens are on
            from agenthost.app.identity.introspection import Introspector
            from agenthost.app.identity.keys import IssuerKeys
            from agenthost.app.identity.tokens import TokenValidator
        except ImportError as exc:
            raise KeysError(f"AGENTHOST_OIDC_ISSUER: {exc}") from None

        if not self.oidc_audience:
            raise KeysError("AGENTHOST_OIDC_ISSUER needs AGENTHOST_OIDC_AUDIENCE")
        keys = IssuerKeys(self.oidc_issuer, refetch_seconds=self.oidc_jwks_refetch_seconds)
        introspector = None
        if self.oidc_introspection_url:
            if not (self.oidc_client_id and self.oidc_client_secret):
                raise KeysError(
                    "AGENTHOST_OIDC_INTROSPECTION_URL needs AGENTHOST_OIDC_CLIENT_ID "
                    "and AGENTHOST_OIDC_CLIENT_SECRET"
                )
            introspector = Introspector(
                self.oidc_introspection_url,
                self.oidc_client_id,
                self.oidc_client_secret.get_secret_value(),
            )
        return TokenValidator(
            keys,
            audience=self.oidc_audience,
            principal_claim=self.oidc_principal_claim,
            scopes_claim=self.oidc_scopes_claim,
            tenant_claim=self.oidc_tenant_claim,
            skew_seconds=self.oidc_clock_skew_seconds,
            introspector=introspector,
        )

    # The web playground (app/playground.py).
    playground: bool = Field(
        True,
        description="Serve the playground page at / and /playground (chat with each agent over "
        "/v1, its tools, connect snippets per protocol); the page is public, its agent list "
        "(/playground/agents.json) needs a key when keys are on.",
    )

    # Observability (docs/observability.md): GET /metrics and log lines.
    metrics: bool = Field(
        True, description="Count runs, tokens, tools and upstream requests for GET /metrics."
    )
    metrics_public: bool = Field(
        False,
        description="Serve GET /metrics without an API key when keys are on (off: it needs a "
        "key like any other route).",
    )
    metrics_port: int = Field(
        0,
        ge=0,
        le=65535,
        description="A second port serving only /metrics, without keys, on the same address "
        "(for scrapers inside the cluster); 0: none.",
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description="'json': one JSON object per log line (time, level, logger, message, "
        "request_id, protocol, trace_id and span_id when tracing).",
    )

    # Quotas per principal (app/quotas.py); the quotas file overrides them per principal.
    quota_requests_per_minute: int = Field(
        0,
        ge=0,
        description="Requests a minute per principal (API key name), every replica's together "
        "with a Redis session store; bursts up to it, then one every 60/N s. More get 429 with "
        "Retry-After. Health, metrics and discovery paths do not count. 0: unlimited.",
    )
    quota_concurrent_runs: int = Field(
        0,
        ge=0,
        description="Runs one principal has in progress at once (a request that starts runs "
        "holds a slot until it answered and its runs, detached ones too, ended), every "
        "replica's together with a Redis session store; more get 429. 0: unlimited.",
    )
    quota_tokens_per_day: int = Field(
        0,
        ge=0,
        description="Model tokens (prompt + completion, as the model reports them) one principal's "
        "runs may use per UTC day; past it new runs get 429 until UTC midnight. 0: unlimited.",
    )
    quotas_file: Path | None = Field(
        None,
        description="A YAML file of quotas: 'default:' (over the AGENTHOST_QUOTA_* settings) and "
        "'principals:' (name: {requests_per_minute, concurrent_runs, tokens_per_day}).",
    )


def _protocol_of(key: str) -> str | None:
    if key in Settings.model_fields:
        return None
    return next((name for name in PROTOCOL_SETTINGS if key.startswith(f"{name}_")), None)


def known_variables() -> list[str]:
    """Every settings variable: the process's own, then each protocol's."""
    models: list[type[BaseSettings]] = [Settings, *PROTOCOL_SETTINGS.values()]
    return [
        f"{model.model_config.get('env_prefix', '')}{name}".upper()
        for model in models
        for name in model.model_fields
    ]


def unknown_variables(environ: Iterable[str]) -> list[tuple[str, str | None]]:
    """``AGENTHOST_…`` names in ``environ`` that are no setting, each with the closest known
    name (or None): a misspelt variable would otherwise be ignored without a word."""
    known = known_variables()
    # Compared without the prefix every name shares, which would make any two look alike.
    stems = {name.removeprefix(PREFIX): name for name in known}
    unknown = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(PREFIX) or upper in known or upper in OTHER_VARIABLES:
            continue
        close = difflib.get_close_matches(upper.removeprefix(PREFIX), stems, n=1, cutoff=0.6)
        unknown.append((name, stems[close[0]] if close else None))
    return unknown


def warn_unknown_variables(environ: Iterable[str] | None = None) -> None:
    """Log a warning for each unknown ``AGENTHOST_…`` variable (default: the environment)."""
    for name, close in unknown_variables(os.environ if environ is None else environ):
        hint = f"; did you mean {close}?" if close else ""
        logger.warning("%s is not a setting and is ignored%s", name, hint)
