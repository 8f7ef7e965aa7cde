"""The settings reference, ``docs/settings.md``, rendered from :class:`Settings`
and each protocol's settings (its adapter package's ``Settings``).

Run ``python -m agenthost.app.settings_doc > docs/settings.md`` (``make
settings-doc``); a test fails when the committed file is stale, as one does
for ``config/agents.schema.json``. Each row is one field: its environment
variable, type (with its bounds), default and ``Field(description=...)``.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import SecretStr, WithJsonSchema
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from agenthost.app.settings import PROTOCOL_SETTINGS, Settings

HEADER = """\
# Settings

<!-- Generated from app/settings.py and adapters/<protocol>/settings.py by `make settings-doc`;
edit the descriptions there. -->

Every setting is an environment variable with the `AGENTHOST_` prefix (read
once at start-up); lists are comma-separated (`openai,a2a`). `agenthost
serve` flags `--config`, `--host`, `--port` and `--log-level` override their
variables (see [the CLI](configuration.md#cli)). Connection and run limits are
explained, with what happens past each, in [Security and limits](security.md).

| variable | type | default | meaning |
|---|---|---|---|
"""

_NAMES: dict[type, str] = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    Path: "path",
    SecretStr: "secret",
}
_BOUNDS = (
    (annotated_types.Ge, "ge", "≥"),
    (annotated_types.Gt, "gt", ">"),
    (annotated_types.Le, "le", "≤"),
    (annotated_types.Lt, "lt", "<"),
)


def render() -> str:
    """The whole Markdown document: one table row per field of ``Settings``, then of each
    protocol's settings."""
    models: list[type[BaseSettings]] = [Settings, *PROTOCOL_SETTINGS.values()]
    rows = [
        f"| `{prefix}{name.upper()}` | {_type(field)} | {_default(field)} | "
        f"{_cell(field.description or '')} |\n"
        for model in models
        for prefix in (str(model.model_config.get("env_prefix", "")),)
        for name, field in model.model_fields.items()
    ]
    return HEADER + "".join(rows)


def _type(field: FieldInfo) -> str:
    text = _type_name(field.annotation)
    bounds = [
        f"{sign} {_value(getattr(item, attribute))}"
        for item in field.metadata
        for kind, attribute, sign in _BOUNDS
        if isinstance(item, kind)
    ]
    return _cell(" ".join([text, ", ".join(bounds)]).strip())


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(f"`{value}`" for value in get_args(annotation))
    if origin is Annotated:  # a constrained type that says its values in its JSON schema
        base, *metadata = get_args(annotation)
        for item in metadata:
            schema = item.json_schema if isinstance(item, WithJsonSchema) else None
            if schema and "enum" in schema:
                return "one of " + ", ".join(f"`{v}`" for v in schema["enum"])
        return _type_name(base)
    if origin is list:
        (item,) = get_args(annotation)
        return "list of " + _type_name(item).removeprefix("one of ")
    if origin in (Union, types.UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        return " or ".join(_type_name(arg) for arg in kept)
    return _NAMES.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if value is None:
        return "unset"
    if isinstance(value, list):
        return f"`{','.join(map(str, value))}`" if value else "empty"
    return f"`{_value(value)}`"


def _value(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main() -> None:
    """Print the settings reference (``make settings-doc`` writes it to docs/settings.md)."""
    print(render(), end="")


if __name__ == "__main__":
    main()
