"""Mounting the adapters: which protocols are served, and where their routes go."""

from __future__ import annotations

import logging

from fastapi import FastAPI
from starlette.routing import Route

from agenthost.adapters.base import Adapter
from agenthost.app.host import Host
from agenthost.app.protocols import ADAPTERS

logger = logging.getLogger("agenthost")


def build_adapters(host: Host) -> dict[str, Adapter]:
    """Prefix → adapter of each protocol the settings serve.

    With ``AGENTHOST_ADAPTERS`` unset, a protocol whose extra is missing is
    skipped with a warning; named there, it stops start-up (ImportError).
    """
    settings = host.settings
    adapters: dict[str, Adapter] = {}
    chosen = "adapters" in settings.model_fields_set
    for name in dict.fromkeys(settings.adapters):
        try:
            adapters[ADAPTERS[name].prefix] = host.adapter(name)
        except ImportError as exc:
            if chosen:
                raise
            # Not asked for by name: serve the protocols that are installed.
            logger.warning("not serving %s: %s", name, exc)
    return nested_first(adapters)


def nested_first(adapters: dict[str, Adapter]) -> dict[str, Adapter]:
    """``adapters`` with a prefix under another's before it (``/v1/messages``, then ``/v1``),
    so that whatever takes the first prefix a path is under (routes, error shapes, the
    request's protocol) takes the deepest; the rest keep their order."""

    def depth(prefix: str) -> int:
        return sum(prefix.startswith(other + "/") for other in adapters)

    return dict(sorted(adapters.items(), key=lambda item: -depth(item[0])))


def mount_adapters(app: FastAPI, adapters: dict[str, Adapter]) -> None:
    """Each adapter's router under its prefix, and its root routes (discovery documents)."""
    for prefix, adapter in adapters.items():
        app.include_router(adapter.router, prefix=prefix)
        # The router's root answers at the bare prefix too, without a redirect.
        for route in adapter.router.routes if adapter.at_bare_prefix else ():
            if isinstance(route, Route) and route.path == "/":
                methods = list(route.methods) if route.methods else None
                app.add_route(prefix, route.endpoint, methods, include_in_schema=False)
        if adapter.root_router is not None:
            app.include_router(adapter.root_router)
