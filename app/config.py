"""Load the agents' YAML file: ``${VAR}`` interpolation, then validation.

Every error names the file, the agent and the field, and never shows the
value of an interpolated variable (they hold secrets).
"""

from __future__ import annotations

import difflib
import functools
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from agenthost.app.specs import AGENT_KINDS, ConfigSpec
from agenthost.app.tool_specs import drop_tags

# ${VAR} or ${VAR:-default}; $${VAR} stays literal.
_VARIABLE = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigError(Exception):
    """The config cannot be served; the message says where and why."""


def load_config(path: Path, environ: Mapping[str, str] | None = None) -> ConfigSpec:
    """Read, interpolate and validate a config file."""
    env = os.environ if environ is None else environ
    try:
        with path.open(encoding="utf-8") as stream:  # YAML errors then name the file
            raw = yaml.safe_load(stream)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping with an 'agents' list at the top")
    data = _interpolate(raw, env, path, raw, ())
    try:
        return ConfigSpec.model_validate(data)
    except ValidationError as exc:
        raise ConfigError("\n".join(_describe(path, raw, err) for err in exc.errors())) from None


def _interpolate(
    value: Any, env: Mapping[str, str], path: Path, root: Any, loc: tuple[str | int, ...]
) -> Any:
    if isinstance(value, dict):
        return {k: _interpolate(v, env, path, root, (*loc, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, env, path, root, (*loc, i)) for i, v in enumerate(value)]
    if not isinstance(value, str) or "$" not in value:
        return value

    def replace(match: re.Match[str]) -> str:
        escaped, name, default = match.groups()
        if escaped:
            return match.group(0)[1:]
        if name in env:
            return env[name]
        if default is not None:
            return default
        where = _where(root, loc)
        raise ConfigError(f"{path}: {where}: environment variable {name} is not set")

    return _VARIABLE.sub(replace, value)


def _describe(path: Path, raw: Any, error: Any) -> str:
    loc = tuple(error["loc"])
    # Drop the union tags pydantic puts in the location ("chat", "import", ...).
    loc = tuple(p for i, p in enumerate(loc) if not (i == 2 and p in AGENT_KINDS))
    loc = drop_tags(loc)
    message = error["msg"]
    if error["type"] == "extra_forbidden" and loc and isinstance(loc[-1], str):
        # At the top, the file's own keys; deeper, any key of the schema but the one
        # written (`agent:` is a workflow step's key, not what `agent:` at the top meant).
        known = _top_keys() if len(loc) == 1 else _known_keys() - {loc[-1]}
        message += did_you_mean(loc[-1], known)
    elif error["type"] == "union_tag_invalid" and len(loc) == 2 and loc[0] == "agents":
        kind = str(error["ctx"]["tag"])  # an agent's kind: pydantic names its discriminator
        kinds = [k for k in AGENT_KINDS if k != "import"]
        loc, message = (
            (*loc, "kind"),
            (
                f"unknown kind {kind!r}; use one of {', '.join(kinds)} (or import: for an "
                f"agent from code){did_you_mean(kind, kinds)}"
            ),
        )
    return f"{path}: {_where(raw, loc)}: {message}"


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice a misspelt ``word`` most likely meant, if any is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``; did you mean 'CHOICE'?`` for the choice closest to a misspelt ``word``, or ``""``."""
    choice = closest(word, choices)
    return f"; did you mean {choice!r}?" if choice else ""


@functools.cache
def _known_keys() -> frozenset[str]:
    """Every key the config file's schema names, anywhere (for "did you mean")."""
    keys: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            properties = node.get("properties")
            if isinstance(properties, dict):
                keys.update(properties)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(ConfigSpec.model_json_schema(by_alias=True))
    return frozenset(keys)


@functools.cache
def _top_keys() -> frozenset[str]:
    """The keys of the config file's top level."""
    return frozenset(ConfigSpec.model_json_schema(by_alias=True)["properties"])


def _where(raw: Any, loc: tuple[Any, ...]) -> str:
    if len(loc) >= 2 and loc[0] == "agents" and isinstance(loc[1], int):
        agents = raw.get("agents") if isinstance(raw, dict) else None
        name = None
        if isinstance(agents, list) and loc[1] < len(agents) and isinstance(agents[loc[1]], dict):
            name = agents[loc[1]].get("name")
        agent = f"agent {name!r}" if name else f"agents[{loc[1]}]"
        field = ".".join(str(p) for p in loc[2:])
        return f"{agent}: {field}" if field else agent
    return ".".join(str(p) for p in loc) or "top level"
