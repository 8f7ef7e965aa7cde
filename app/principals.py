"""API keys and the principals they name.

A key is given as ``name:KEY`` (the name is the principal, and becomes part
of the key of everything the caller stores), or as a bare ``KEY``, whose
principal is ``key-`` plus the first 12 hex digits of its SHA-256: stable
across restarts and replicas, and telling nothing about the key. Many keys
can come from a file, one ``name:KEY`` per line (``#`` starts a comment).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


class KeysError(ValueError):
    """The API key settings cannot be used."""


def parse_key(entry: str) -> tuple[str, str]:
    """``name:KEY`` or ``KEY`` → ``(principal, key)``."""
    name, sep, key = entry.partition(":")
    if sep and NAME.match(name) and key.strip():
        return name, key.strip()
    digest = hashlib.sha256(entry.encode()).hexdigest()[:12]
    return f"key-{digest}", entry


def read_keys_file(path: Path) -> list[str]:
    """The entries of a keys file: one per line, blank lines and ``#`` comments skipped."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise KeysError(f"cannot read the API keys file {path}: {exc.strerror}") from None
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def build_principals(entries: Iterable[str]) -> dict[str, str]:
    """key → principal; a key given twice, or two keys with one name, is an error."""
    principals: dict[str, str] = {}
    for entry in entries:
        name, key = parse_key(entry)
        if key in principals:
            raise KeysError(f"an API key is listed twice (principals {principals[key]}, {name})")
        if name in principals.values():
            raise KeysError(f"two API keys are named {name!r}")
        principals[key] = name
    return principals


def check_allow(allow: Mapping[str, frozenset[str]], principals: Mapping[str, str]) -> None:
    """With auth on, every agent's ``allow`` list must name principals that have a key."""
    if not principals:
        return
    known = set(principals.values())
    for agent, names in allow.items():
        unknown = sorted(names - known)
        if unknown:
            raise KeysError(
                f"agent {agent!r}: allow: unknown principal {unknown[0]!r}; "
                f"API keys are named {', '.join(sorted(known))}"
            )
