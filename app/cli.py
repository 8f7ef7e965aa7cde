"""The ``agenthost`` command: ``serve``, ``check`` and ``schema``."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from app.build import load_agents
from app.config import ConfigError
from app.principals import KeysError, check_allow
from app.registry import Registry
from app.settings import Settings
from app.specs import ConfigSpec


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agenthost", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the configured agents")
    check = commands.add_parser("check", help="validate a config and list its agents")
    for sub in (serve, check):
        sub.add_argument("--config", type=Path, help="agents YAML (default: config/agents.yaml)")
    serve.add_argument("--host", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: 8000)")
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    commands.add_parser("schema", help="print the JSON schema of the config file")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    flags = {
        key: value
        for key, value in vars(args).items()
        if key in ("config", "host", "port", "log_level") and value is not None
    }
    return Settings(**flags)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "schema":
        schema = ConfigSpec.model_json_schema(by_alias=True)
        print(json.dumps(schema, indent=2))
        return 0
    try:
        settings = _settings(args)
        config, registry = load_agents(settings.config)
        check_allow(registry.allow, settings.principals())
    except ValidationError as exc:
        print(f"error: invalid settings: {exc}", file=sys.stderr)
        return 2
    except (ConfigError, KeysError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "check":
        for spec in config.agents:
            print(f"{spec.name}\t{spec.source}\t{spec.description}")
        print(f"{settings.config}: {len(registry)} agents OK")
        return 0
    return _serve(settings, registry)


def _serve(settings: Settings, registry: Registry) -> int:
    import uvicorn

    from app.server import create_app
    from app.serving import DrainingServer

    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    app = create_app(settings, registry)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=settings.access_log,
        timeout_graceful_shutdown=30,
    )
    DrainingServer(config, app, drain_seconds=settings.drain_seconds).run()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
