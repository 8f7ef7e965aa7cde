"""The ``agenthost`` command: ``serve``, ``check``, ``schema``, ``mcp-stdio`` and ``acp-stdio``."""

from __future__ import annotations

import argparse
import errno
import json
import logging
import socket
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from importlib.metadata import version
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from agenthost.app.build import load_agents
from agenthost.app.config import ConfigError
from agenthost.app.host import Host
from agenthost.app.principals import KeysError, check_allow
from agenthost.app.quotas import check_quotas_file
from agenthost.app.registry import Registry
from agenthost.app.settings import PROTOCOL_SETTINGS, Settings, warn_unknown_variables
from agenthost.app.specs import ConfigSpec
from agenthost.app.unused_modules import skip as skip_unused_modules

DESCRIPTION = (
    "Serve AI agents defined in a YAML config over the OpenAI and Anthropic APIs, A2A, "
    "MCP, ACP, AG-UI, the AI SDK and watsonx Orchestrate. "
    "Settings come from AGENTHOST_* environment variables (docs/settings.md)."
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agenthost", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"agenthost {version('agenthost')}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the configured agents")
    check = commands.add_parser("check", help="validate a config and list its agents")
    for sub in (serve, check):
        sub.add_argument("--config", type=Path, help="agents YAML (default: config/agents.yaml)")
    serve.add_argument("--host", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: 8000)")
    serve.add_argument(
        "--workers",
        help="processes serving the port: a number or 'auto', one per CPU (default: 1; "
        "more need Redis sessions, as replicas do)",
    )
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    commands.add_parser("schema", help="print the JSON schema of the config file")
    commands.add_parser(
        "migrate", help="create the A2A task store's tables (AGENTHOST_A2A_TASK_STORE) and exit"
    )
    # MCP over stdio, for desktop clients that spawn the server (Claude Desktop, ...).
    mcp_stdio = commands.add_parser("mcp-stdio", help="serve the agents as MCP tools over stdio")
    mcp_stdio.add_argument("--config", type=Path, help="agents YAML (default: config/agents.yaml)")
    mcp_stdio.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    acp_stdio = commands.add_parser(
        "acp-stdio", help="serve one agent over stdio to an editor (Zed's Agent Client Protocol)"
    )
    acp_stdio.add_argument("agent", help="the agent's name in the config")
    acp_stdio.add_argument("--config", type=Path, help="agents YAML (default: config/agents.yaml)")
    acp_stdio.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    return parser


def port_problem(host: str, port: int) -> str | None:
    """Why ``serve`` could not listen on ``host:port`` (None: it can), found before the
    agents are built so that a port in use is said at once, not after a model loads."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (
                    f"{host}:{port} is already in use (another agenthost?): stop it, or "
                    "choose another port with --port or AGENTHOST_PORT"
                )
            if exc.errno == errno.EACCES:
                return f"cannot listen on {host}:{port}: ports below 1024 need privileges"
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def settings_errors(exc: ValidationError) -> str:
    """Each error of the settings with the variable that set it (never its value: it may
    be a secret), e.g. ``AGENTHOST_PORT: Input should be a valid integer``."""
    lines = []
    for error in exc.errors():
        parts = [str(p) for p in error["loc"] if not isinstance(p, int)]
        message = error["msg"].removeprefix("Value error, ")  # pydantic's, for our own checks
        lines.append(f"  {_variable(parts[0]) if parts else 'settings'}: {message}")
    return "\n".join(lines)


def _variable(field: str) -> str:
    """The environment variable of setting ``field`` (a protocol's, when only one has it)."""
    if field not in Settings.model_fields:
        owners = [n for n, model in PROTOCOL_SETTINGS.items() if field in model.model_fields]
        if len(owners) == 1:
            return f"AGENTHOST_{owners[0].upper()}_{field.upper()}"
    return f"AGENTHOST_{field.upper()}"


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line (over the environment's)."""
    names = ("config", "host", "port", "workers", "log_level")
    return {key: value for key, value in vars(args).items() if key in names and value is not None}


def main(argv: Sequence[str] | None = None) -> int:
    skip_unused_modules()
    args = _parser().parse_args(argv)
    if args.command == "schema":
        schema = ConfigSpec.model_json_schema(by_alias=True)
        print(json.dumps(schema, indent=2))
        return 0
    if args.command == "migrate":  # needs no agents file: a release's hook runs it first
        return migrate()
    # Before anything can print: stdout carries the protocol alone.
    protocol_out = _claim_stdout() if args.command == "acp-stdio" else None
    try:
        settings = Settings(**_flags(args))
        if args.command == "serve" and (problem := port_problem(settings.host, settings.port)):
            print(f"error: {problem}", file=sys.stderr)  # before any model loads
            return 2
        config, registry = load_agents(settings.config)
        check_allow(registry.allow, settings.principals())
        check_quotas_file(settings)
    except ValidationError as exc:
        print(f"error: invalid settings:\n{settings_errors(exc)}", file=sys.stderr)
        return 2
    except (ConfigError, KeysError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command != "serve":  # serve warns once its log is set up
        warn_unknown_variables()
    if args.command == "check":
        for spec in config.agents:
            print(f"{spec.name}\t{spec.source}\t{spec.description}")
        count = len(registry)
        print(f"{settings.config}: {count} {'agent' if count == 1 else 'agents'} OK")
        return 0
    if args.command == "serve":
        return _serve_workers(_flags(args), settings, registry)
    host = Host(settings, registry)
    if protocol_out is not None:
        return _acp_stdio(host, args.agent, protocol_out)
    return _mcp_stdio(host)


def migrate() -> int:
    """``agenthost migrate``: create the A2A task store's tables now and exit.

    What ``serve`` does at start-up when they are missing (the stores' own
    ``create_all``, idempotent), as a step of its own: a Helm pre-install and
    pre-upgrade hook runs it, so a database that cannot be reached or a
    schema that cannot be made stops the release, not its pods. Reads only
    the settings (``AGENTHOST_A2A_TASK_STORE``), never the agents file.
    """
    import asyncio

    try:
        from agenthost.adapters.a2a.settings import Settings as A2ASettings

        url = A2ASettings().task_store
    except ValidationError as exc:
        print(f"error: invalid settings:\n{settings_errors(exc)}", file=sys.stderr)
        return 2
    try:
        from sqlalchemy.exc import SQLAlchemyError

        from agenthost.adapters.a2a.tasks import TaskStoreError, TaskStores
    except ImportError as exc:
        print(f"error: {exc} (install agenthost[a2a,postgresql])", file=sys.stderr)
        return 2
    try:
        stores = TaskStores(url, max_tasks=1, ttl=1.0)
    except TaskStoreError as exc:
        print(f"error: AGENTHOST_A2A_TASK_STORE: {exc}", file=sys.stderr)
        return 2

    async def create() -> bool:
        try:
            return await stores.create_tables()
        finally:
            await stores.aclose()

    where = _without_password(url)
    try:
        made = asyncio.run(create())
    except (OSError, SQLAlchemyError) as exc:  # unreachable, refused, no such database
        print(f"error: cannot create the A2A tables in {where}: {exc}", file=sys.stderr)
        return 1
    if made:
        print(f"A2A task store {where}: tables ready")
    else:
        print("A2A task store is memory (AGENTHOST_A2A_TASK_STORE): no tables to make")
    return 0


def _without_password(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``, to print."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def _mcp_stdio(host: Host) -> int:
    from agenthost.adapters.mcp.command import serve_mcp_stdio
    from agenthost.adapters.mcp.settings import Settings as MCPSettings
    from agenthost.app.metrics import current_protocol

    log_to_stderr(host)
    context = host.context("mcp")
    settings = host.settings.protocol("mcp")
    assert isinstance(settings, MCPSettings)

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        async with host.running():
            count = len(context.agents)
            logging.getLogger("agenthost").info(
                "serving %d %s over MCP stdio: %s",
                count,
                "agent" if count == 1 else "agents",
                ", ".join(context.agents),
            )
            yield

    current_protocol.set("mcp")  # the run's task inherits it: the metrics' label
    try:
        return serve_mcp_stdio(context, settings, running())
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def log_to_stderr(host: Host) -> None:
    """stdout carries a stdio protocol: every log line goes to stderr."""
    from agenthost.app.logs import use_json

    logging.basicConfig(
        stream=sys.stderr,
        level=host.settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if host.settings.log_format == "json":
        use_json()


def _serve_workers(flags: dict[str, Any], settings: Settings, registry: Registry) -> int:
    from agenthost.app.workers import serve_workers, unshared_state, worker_count

    count = worker_count(settings)
    if count == 1:
        return _serve(settings, registry)
    if problem := unshared_state(settings):
        print(f"error: {count} workers: {problem}", file=sys.stderr)
        return 2
    _log_to_stdout(settings)
    warn_unknown_variables()
    return serve_workers(flags, settings, count)


def serve_on(
    flags: dict[str, Any],
    sockets: list[socket.socket],
    started: Callable[[], None] | None = None,
) -> int:
    """One worker of ``agenthost serve --workers N``: serve ``sockets`` (bound by the parent);
    ``started`` is called once it accepts."""
    skip_unused_modules()
    settings = Settings(**flags)
    _, registry = load_agents(settings.config)
    return _serve(settings, registry, sockets, started, worker=True)


def _log_to_stdout(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from agenthost.app.logs import use_json

    if settings.log_format == "json":
        use_json()


def _serve(
    settings: Settings,
    registry: Registry,
    sockets: list[socket.socket] | None = None,
    started: Callable[[], None] | None = None,
    *,
    worker: bool = False,
) -> int:
    from agenthost.app.server import create_app
    from agenthost.app.serving import build_server, raise_open_files_limit

    _log_to_stdout(settings)
    if not worker:  # the parent warned once for every worker
        warn_unknown_variables()
    before, after = raise_open_files_limit()
    logging.getLogger("agenthost").info("open files limit: %d (was %d)", after, before)
    try:
        app = create_app(settings, registry)
    except ImportError as exc:  # a protocol asked for by name whose extra is missing
        print(f"error: {exc}", file=sys.stderr)
        return 2
    server = build_server(settings, app)  # configures uvicorn's loggers
    if settings.log_format == "json":
        from agenthost.app.logs import use_json

        use_json()
    server.on_started = started
    server.run(sockets)
    return 0


def _claim_stdout() -> IO[bytes]:
    try:
        from agenthost.adapters.acp_zed import claim_stdout
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return claim_stdout()


def _acp_stdio(host: Host, name: str, out: IO[bytes]) -> int:
    import asyncio

    from agenthost.adapters.acp_zed import serve_stdio

    context = host.context("acp_zed")
    agent = context.agents.get(name)
    if agent is None:
        served = ", ".join(context.agents) or "no agents"
        hidden = (
            " (others are not exposed over acp_zed)"
            if len(context.agents) < len(host.registry)
            else ""
        )
        config = host.settings.config
        print(f"error: unknown agent {name!r}; {config} serves {served}{hidden}", file=sys.stderr)
        return 2
    log_to_stderr(host)
    running = host.running()
    from agenthost.app.metrics import current_protocol

    current_protocol.set("acp_zed")  # the run's task inherits it: the metrics' label
    principal = host.settings.stdio_principal
    serving = serve_stdio(
        agent, context.memory, out, running, version=version("agenthost"), principal=principal
    )
    asyncio.run(serving)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
