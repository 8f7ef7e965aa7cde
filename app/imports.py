"""Objects named in config by import path: ``package.module:attribute``."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def import_path(path: str, base_dir: Path | None = None) -> Any:
    """``package.module:attribute`` → the object; ``base_dir`` is searched too (last).

    Raises ImportError or AttributeError.
    """
    module_name, _, attribute = path.partition(":")
    with _searching(base_dir):
        obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


@contextmanager
def _searching(base_dir: Path | None) -> Iterator[None]:
    # Modules next to the config file import without installing them. Searched
    # last, so they never shadow an installed module; the path is restored
    # after (the imported module stays in sys.modules).
    if base_dir is None or str(base_dir) in sys.path:
        yield
        return
    sys.path.append(str(base_dir))
    try:
        yield
    finally:
        sys.path.remove(str(base_dir))
