"""The a2a-sdk's database stores, imported only when a task store URL needs them.

``a2a.server.tasks`` and ``a2a.server.cluster`` import their SQLAlchemy
stores whenever SQLAlchemy is installed (agenthost's ``a2a`` and
``postgresql`` extras install it), and with them the A2A 0.3 conversion
models: about half of an echo config's start-up CPU (bench/README.md,
issue 24), for a store that the default ``memory`` setting never uses.

:func:`defer` marks those modules absent (``None`` in ``sys.modules``, which
makes their import raise ``ImportError``) before the first ``a2a.server``
import, so the SDK defines its placeholders instead, as it does without
SQLAlchemy. :func:`load` removes the marks, imports the real modules and puts
their classes back where the SDK's packages export them.

No public way exists (a2a-sdk 1.3): ``a2a.server.tasks/__init__`` and
``a2a.server.cluster/__init__`` import these modules eagerly, and every SDK
module we use lives under them. The only other way is packaging: an ``a2a``
extra without SQLAlchemy (the SQLite store in an extra of its own).
"""

from __future__ import annotations

import importlib
import sys

# Each database module of the SDK, with the names its package exports from it.
MODULES: dict[str, tuple[str, ...]] = {
    "a2a.server.tasks.database_task_store": ("DatabaseTaskStore",),
    "a2a.server.tasks.database_push_notification_config_store": (
        "DatabasePushNotificationConfigStore",
    ),
    "a2a.server.cluster.database_event_stream": ("DatabaseTaskEventStream",),
    "a2a.server.cluster.database_task_store": ("VersionedDatabaseTaskStore",),
}


def defer() -> None:
    """Keep the SDK's database modules out until :func:`load` (no-op once imported)."""
    for name in MODULES:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def load() -> None:
    """Import the SDK's database modules and restore its packages' exports.

    Raises ``ImportError`` naming the extra when SQLAlchemy or a driver is missing.
    """
    for name in MODULES:
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]
    for name, exported in MODULES.items():
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ImportError(
                "a database A2A task store needs SQLAlchemy and its driver: "
                "pip install 'agenthost[a2a]' (SQLite) or 'agenthost[postgresql]'"
            ) from exc
        package = sys.modules[name.rpartition(".")[0]]
        for attribute in exported:
            setattr(package, attribute, getattr(module, attribute))
