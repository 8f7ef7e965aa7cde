"""API keys and the principals they name.

A key is given as ``name:KEY`` (the name is the principal, and becomes part
of the key of everything the caller stores), or as a bare ``KEY``, whose
principal is ``key-`` plus the first 12 hex digits of its SHA-256: stable
across restarts and replicas, and telling nothing about the key. Many keys
can come from a file, UTF-8 text, one ``name:KEY`` per line; a ``#`` at the
start of a line or after whitespace starts a comment (so a key may hold ``#``,
but not whitespace followed by ``#``).

A key may belong to a tenant: ``TENANT/name:KEY``. Its principal is then
``TENANT/name``, the owner key of everything it stores, so ``t1/alice`` and
``t2/alice`` never see each other's state; an agent's ``allow`` list may name
``t1/alice``, the bare ``alice`` (in any tenant) or ``tenant:t1`` (anyone in
it). A tenant name is a name too (a letter or digit, up to 64 characters,
no ``/``).

A key must be at least :data:`MIN_KEY_LENGTH` characters of printable ASCII
(HTTP headers carry nothing else, so any other key could never
authenticate). An empty key after a name (``alice:``, what ``alice:$UNSET``
expands to), a bare ``:``, a short key, text before a ``:`` that is not a
valid name (a bare key cannot hold ``:``), a file that is not UTF-8 or
starts with a byte order mark, stops start-up with an error that names the
entry (its name, or its place in the list or the file), never the key.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from agenthost.adapters.base import Principal

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
TENANT = NAME
"""What a tenant is named (an API key's, or a token's tenant claim): no ``/``, bounded."""
MIN_KEY_LENGTH = 16
_COMMENT = re.compile(r"(?:^|\s)#.*")
_BOM = b"\xef\xbb\xbf"


class KeysError(ValueError):
    """The API key settings cannot be used."""


def parse_key(entry: str, where: str = "an API key") -> tuple[str, str]:
    """``name:KEY`` or ``KEY`` → ``(principal, key)``; ``where`` names the entry in errors."""
    name, sep, key = entry.partition(":")
    if not sep:
        _check_key(entry, where)
        digest = hashlib.sha256(entry.encode()).hexdigest()[:12]
        return f"key-{digest}", entry
    key = key.strip()
    tenant, slash, bare = name.rpartition("/")
    valid = bool(TENANT.match(tenant) and NAME.match(bare) if slash else NAME.match(name))
    label = f"{where} (named {name!r})" if valid else where
    if not key:
        raise KeysError(f"{label}: the key after ':' is empty")
    if not name.strip():
        raise KeysError(f"{where}: the name before ':' is empty")
    if not valid:
        # Not repeated: it may be part of a bare key holding a ':'.
        raise KeysError(
            f"{where}: the text before ':' is not a name or TENANT/name (each a letter or "
            "digit, then up to 63 letters, digits, '.', '_', '@' or '-'); a bare key cannot "
            "hold ':'"
        )
    _check_key(key, label)
    return name, key


def _check_key(key: str, where: str) -> None:
    if len(key) < MIN_KEY_LENGTH:
        raise KeysError(f"{where}: the key is shorter than {MIN_KEY_LENGTH} characters")
    if not (key.isascii() and key.isprintable()):
        raise KeysError(
            f"{where}: the key holds a character that is not printable ASCII; "
            "HTTP headers cannot carry it, so it could never authenticate"
        )


def read_keys_file(path: Path) -> list[str]:
    """The entries of a keys file: one per line, blank lines and ``#`` comments skipped."""
    return [entry for _, entry in read_keys_file_lines(path)]


def read_keys_file_lines(path: Path) -> list[tuple[int, str]]:
    """``(line number, entry)`` of each entry of a keys file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KeysError(f"cannot read the API keys file {path}: {exc.strerror}") from None
    if data.startswith(_BOM):
        raise KeysError(
            f"the API keys file {path} line 1 starts with a UTF-8 byte order mark; "
            "save it as UTF-8 without one"
        )
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise KeysError(f"the API keys file {path} line {line} is not UTF-8 text") from None
    # "\n" only: splitlines() also splits at control characters and U+2028,
    # which would number lines unlike an editor does (the key check refuses them).
    lines = ((n, _COMMENT.sub("", line).strip()) for n, line in enumerate(text.split("\n"), 1))
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
        principals[key] = key_principal(name)
    return principals


def key_principal(name: str) -> str:
    """An API key's principal: ``name``, or for ``TENANT/name`` a :class:`Principal` of
    that tenant (its value is still ``TENANT/name``)."""
    tenant, slash, bare = name.rpartition("/")
    return Principal(bare, tenant=tenant) if slash else name


def check_allow(
    allow: Mapping[str, frozenset[str]], principals: Mapping[str, str], *, tokens: bool = False
) -> None:
    """With auth on, every agent's ``allow`` list must name principals that have a key; with
    OIDC tokens on, it may also name token principals (``oidc:SUB``) and scopes (``scope:NAME``).
    A tenant (``tenant:NAME``) must be one a key belongs to, or any with tokens on; a token
    principal of a tenant is ``TENANT/oidc:SUB``."""
    if not principals and not tokens:
        return
    keyed = set(principals.values())
    known = keyed | {p.name for p in keyed if isinstance(p, Principal)}
    known |= {f"tenant:{p.tenant}" for p in keyed if isinstance(p, Principal) and p.tenant}
    for agent, names in allow.items():
        token_names = {
            n
            for n in names  # a token of a tenant: TENANT/oidc:SUB
            if n.startswith(("scope:", "tenant:")) or n.rpartition("/")[2].startswith("oidc:")
        }
        unknown = sorted(names - known - token_names)
        if token_names - known and not tokens:
            unknown = sorted(token_names - known) + unknown
        if unknown:
            hint = "OIDC tokens are off (AGENTHOST_OIDC_ISSUER)" if tokens is False else ""
            named = f"API keys are named {', '.join(sorted(known))}" if known else "no API key"
            raise KeysError(
                f"agent {agent!r}: allow: unknown principal {unknown[0]!r}; {named}"
                + (f"; {hint}" if hint and unknown[0] in token_names else "")
            )
