"""API keys and the principals they name.

A key is given as ``name:KEY`` (the name is the principal, and becomes part
of the key of everything the caller stores), or as a bare ``KEY``, whose
principal is ``key-`` plus the first 12 hex digits of its SHA-256: stable
across restarts and replicas, and telling nothing about the key. Many keys
can come from a file, one ``name:KEY`` per line (``#`` starts a comment).

A key must be at least :data:`MIN_KEY_LENGTH` characters: an empty key after
a name (``alice:``, what ``alice:$UNSET`` expands to), a bare ``:`` or a
short key stops start-up with an error that names the entry (its name, or
its place in the list or the file), never the key.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
MIN_KEY_LENGTH = 16


class KeysError(ValueError):
    """The API key settings cannot be used."""


def parse_key(entry: str, where: str = "an API key") -> tuple[str, str]:
    """``name:KEY`` or ``KEY`` → ``(principal, key)``; ``where`` names the entry in errors."""
    name, sep, key = entry.partition(":")
    if sep and (NAME.match(name) or not name.strip()):
        key = key.strip()
        label = f"{where} (named {name!r})" if name else where
        if not key:
            raise KeysError(f"{label}: the key after ':' is empty")
        if not name.strip():
            raise KeysError(f"{where}: the name before ':' is empty")
        if len(key) < MIN_KEY_LENGTH:
            raise KeysError(f"{label}: the key is shorter than {MIN_KEY_LENGTH} characters")
        if name:
            return name, key
    if len(entry) < MIN_KEY_LENGTH:
        raise KeysError(f"{where}: the key is shorter than {MIN_KEY_LENGTH} characters")
    digest = hashlib.sha256(entry.encode()).hexdigest()[:12]
    return f"key-{digest}", entry


def read_keys_file(path: Path) -> list[str]:
    """The entries of a keys file: one per line, blank lines and ``#`` comments skipped."""
    return [entry for _, entry in read_keys_file_lines(path)]


def read_keys_file_lines(path: Path) -> list[tuple[int, str]]:
    """``(line number, entry)`` of each entry of a keys file."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise KeysError(f"cannot read the API keys file {path}: {exc.strerror}") from None
    lines = ((n, line.split("#", 1)[0].strip()) for n, line in enumerate(text.splitlines(), 1))
    return [(n, line) for n, line in lines if line]


def build_principals(entries: Iterable[str | tuple[str, str]]) -> dict[str, str]:
    """key → principal; a key given twice, or two keys with one name, is an error.

    An entry is ``name:KEY``/``KEY``, or ``(where, entry)`` to say where it came from.
    """
    principals: dict[str, str] = {}
    for number, item in enumerate(entries, 1):
        where, entry = item if isinstance(item, tuple) else (f"API key #{number}", item)
        name, key = parse_key(entry, where)
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
