"""Pydantic models of an SDK module built on first use instead of when it is imported.

Start-up imports SDK modules whose pydantic models no start-up step and few
requests use: FastAPI's OpenAPI document models (built when ``/openapi.json``
is first asked for), the a2a-sdk's A2A 0.3 models (read by 0.3 requests and
cards with 0.3 fields). Defining a model builds its validator and serializer
(its core schema) at once unless its config says ``defer_build``; importing a
module inside :func:`built_on_first_use` makes that the default for the
models it defines, so each is built by its first validation, dump or schema,
as pydantic does for a model that asks for it. What the module's models are
and do is unchanged. Only for SDK modules first imported inside it: models
defined elsewhere meanwhile (another thread's) would be deferred too, which is
also harmless.

Pydantic has no public switch for a module it does not own: this sets the
default of ``defer_build`` in ``pydantic._internal._config.config_defaults``
for the duration. If a pydantic release drops that table, the models are
built at import again (slower, not broken); tests/test_private_symbols.py
notices.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import ModuleType


@contextmanager
def built_on_first_use() -> Iterator[None]:
    """Models defined inside are built on their first use (``defer_build`` by default)."""
    defaults = _config_defaults()
    if defaults is None:
        yield
        return
    before = defaults["defer_build"]
    defaults["defer_build"] = True
    try:
        yield
    finally:
        defaults["defer_build"] = before


def import_deferred(name: str, *, absent: tuple[str, ...] = ()) -> ModuleType:
    """Module ``name``, its models (and those of modules it imports first) built on first use.

    ``absent`` names optional modules the import is to do without (marked absent
    meanwhile, importable again after): FastAPI's OpenAPI models use ``email_validator``
    only to check a contact's address, which agenthost never gives.
    """
    marked = [m for m in absent if m not in sys.modules]
    for module in marked:
        sys.modules[module] = None  # type: ignore[assignment]
    try:
        with built_on_first_use():
            return importlib.import_module(name)
    finally:
        for module in marked:
            if sys.modules.get(module, ...) is None:
                del sys.modules[module]


def _config_defaults() -> dict[str, object] | None:
    with suppress(ImportError):
        from pydantic._internal import _config

        defaults = getattr(_config, "config_defaults", None)
        if isinstance(defaults, dict) and "defer_build" in defaults:
            return defaults
    return None
