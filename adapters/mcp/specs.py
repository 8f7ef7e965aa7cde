"""The config's MCP declarations: an agent's ``mcp:`` options and the top-level ``mcp:`` section.

An agent's ``mcp:`` gives its tool typed arguments (``input_schema``, and
optionally a ``message`` template that renders them as the user's text) and
its MCP task support. The top-level ``mcp:`` section declares what an MCP
server user expects to serve besides tools: static resources (text or
binary, inline or from a file), resource templates, and prompts with
arguments (text, image and embedded-resource messages, argument
completions). Both are importable without the MCP SDK: the app builds the
config schema from them. The app reads every ``file:`` when it loads the
config (:meth:`MCPConfigSpec.read_files`); the adapter turns the section and
the agents' options into the JSON its server reads (:func:`declared`).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MCPAgentSpec(_Spec):
    """How the agent's MCP tool is called."""

    input_schema: dict[str, Any] | None = Field(
        None,
        description="JSON Schema (an object) of the tool's arguments, replacing the default "
        "{message, session_id}. The arguments are validated against it and reach the agent "
        "as a data part of the user message (or as the text of `message`). A `session_id` "
        "property, if the schema has one, still names the conversation.",
    )
    message: str | None = Field(
        None,
        description="With input_schema: the user message's text, where {name} is replaced "
        "by the argument `name` (e.g. 'Say hello to {name}'); unset: the arguments as data.",
    )
    task_support: Literal["optional", "required", "forbidden"] = Field(
        "optional",
        description="MCP tasks (2026-07-28 extension): 'optional' (a client that declared "
        "tasks gets a task), 'required' (a call without the extension is refused, -32021) "
        "or 'forbidden' (always answered in the call).",
    )
    task_after: float = Field(
        0.0,
        ge=0,
        description="MCP tasks: seconds the run goes on in the call before it becomes a task; "
        "a run that ends, or asks its user, by then is answered in the call (the user's "
        "answer then continues it, as a task if it runs longer). 0: a task at once.",
    )

    @model_validator(mode="after")
    def _object_schema(self) -> MCPAgentSpec:
        if self.input_schema is not None and self.input_schema.get("type", "object") != "object":
            raise ValueError("input_schema must describe an object (type: object)")
        if self.message is not None and self.input_schema is None:
            raise ValueError("message needs input_schema")
        return self


class _Content(_Spec):
    """Text or bytes: inline ``text``, inline base64 ``blob``, or a ``file`` (relative to
    the config file; read as text when the MIME type is textual, else as bytes)."""

    text: str | None = None
    blob: str | None = Field(None, description="Base64 bytes.")
    file: str | None = Field(None, description="A file to serve, relative to the config file.")
    mime_type: str | None = Field(None, description="MIME type, e.g. text/plain, image/png.")

    @model_validator(mode="after")
    def _one_source(self) -> _Content:
        given = [x for x in (self.text, self.blob, self.file) if x is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of text, blob or file")
        return self

    def with_file_read(self, base_dir: Path | None) -> Self:
        """A copy whose ``file`` is read into ``text`` or ``blob``."""
        if self.file is None:
            return self
        return self.model_copy(update={**self.resolved(base_dir), "file": None})

    def resolved(self, base_dir: Path | None) -> dict[str, Any]:
        """``{text}`` or ``{blob}`` (file read), with ``mime_type``."""
        out: dict[str, Any] = {"mime_type": self.mime_type}
        if self.file is None:
            return {**out, "text": self.text, "blob": self.blob}
        path = Path(self.file)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        data = path.read_bytes()
        if _textual(self.mime_type):
            return {**out, "text": data.decode(), "blob": None}
        return {**out, "text": None, "blob": base64.b64encode(data).decode()}


def _textual(mime: str | None) -> bool:
    return mime is None or mime.startswith("text/") or mime == "application/json"


class ResourceSpec(_Content):
    """A resource served as it is (``resources/list``, ``resources/read``)."""

    uri: str = Field(description="Its URI, e.g. docs://guide or file:///notes.txt.")
    name: str
    title: str | None = None
    description: str | None = None


class ResourceTemplateSpec(_Spec):
    """Resources made from a URI template (RFC 6570 level 1: ``{var}``); ``text`` may use
    the same ``{var}`` names, replaced by the values read from the URI."""

    uri_template: str = Field(description="e.g. notes://{id}/text")
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    text: str


class PromptArgumentSpec(_Spec):
    name: str
    description: str | None = None
    required: bool = False
    completions: list[str] = Field(
        default_factory=list,
        description="Values offered by completion/complete (those starting with what the "
        "user typed).",
    )
    elicit: bool = Field(
        default=False,
        description="When a prompts/get request lacks it, ask the user for it (MCP "
        "elicitation; its description is the question) instead of refusing the request.",
    )


class PromptResourceSpec(_Spec):
    """A resource embedded in a prompt message; ``{arg}`` in ``uri`` and ``text`` is replaced."""

    uri: str
    text: str
    mime_type: str | None = "text/plain"


class PromptImageSpec(_Content):
    """An image in a prompt message (``blob`` or ``file``)."""


class PromptMessageSpec(_Spec):
    """One message: exactly one of ``text`` (``{arg}`` replaced), ``image`` or ``resource``."""

    role: Literal["user", "assistant"] = "user"
    text: str | None = None
    image: PromptImageSpec | None = None
    resource: PromptResourceSpec | None = None

    @model_validator(mode="after")
    def _one_content(self) -> PromptMessageSpec:
        if sum(x is not None for x in (self.text, self.image, self.resource)) != 1:
            raise ValueError("give exactly one of text, image or resource")
        return self


class PromptSpec(_Spec):
    """A prompt (``prompts/list``, ``prompts/get``) besides the agents' own."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[PromptArgumentSpec] = Field(default_factory=list)
    messages: list[PromptMessageSpec] = Field(min_length=1)


class MCPConfigSpec(_Spec):
    """What the MCP server serves besides one tool, resource and prompt per agent."""

    resources: list[ResourceSpec] = Field(default_factory=list)
    resource_templates: list[ResourceTemplateSpec] = Field(default_factory=list)
    prompts: list[PromptSpec] = Field(default_factory=list)

    def read_files(self, base_dir: Path | None) -> MCPConfigSpec:
        """A copy with every ``file:`` read (relative to ``base_dir``, the config's folder)."""
        prompts = [
            prompt.model_copy(
                update={
                    "messages": [
                        message.model_copy(update={"image": message.image.with_file_read(base_dir)})
                        if message.image is not None
                        else message
                        for message in prompt.messages
                    ]
                }
            )
            for prompt in self.prompts
        ]
        resources = [resource.with_file_read(base_dir) for resource in self.resources]
        return self.model_copy(update={"resources": resources, "prompts": prompts})


def declared(section: MCPConfigSpec | None, agents: Mapping[str, MCPAgentSpec]) -> dict[str, Any]:
    """The JSON the MCP server reads (defaults filled; files read already by
    :meth:`MCPConfigSpec.read_files`, else relative to the working directory)."""
    section = section if section is not None else MCPConfigSpec()
    resources = [
        {**r.model_dump(exclude={"text", "blob", "file", "mime_type"}), **r.resolved(None)}
        for r in section.resources
    ]
    prompts = []
    for prompt in section.prompts:
        dumped = prompt.model_dump()
        for message, spec in zip(dumped["messages"], prompt.messages, strict=True):
            if spec.image is not None:
                message["image"] = spec.image.resolved(None)
        prompts.append(dumped)
    return {
        "resources": resources,
        "resource_templates": [t.model_dump() for t in section.resource_templates],
        "prompts": prompts,
        "tools": {
            name: spec.model_dump() for name, spec in agents.items() if spec != MCPAgentSpec()
        },
    }


def check(config: Mapping[str, Any], agents: Iterable[str]) -> None:
    """The start-up checks of what the MCP server reads (:func:`declared`), made before its
    SDK is imported: ValueError for a declared prompt named like an agent (every agent is a
    prompt too) or a typed tool whose input schema is not a valid JSON Schema."""
    if clash := sorted({p["name"] for p in config.get("prompts", ())} & set(agents)):
        raise ValueError(f"mcp.prompts: {', '.join(clash)} is also an agent's prompt")
    for spec in (config.get("tools") or {}).values():
        if spec and spec.get("input_schema") is not None:
            check_input_schema(spec["input_schema"])


def check_input_schema(schema: Any) -> None:
    """ValueError unless ``schema`` is a valid JSON Schema (of the dialect it names)."""
    # jsonschema only for typed tools: ~45 modules of start-up otherwise.
    from jsonschema import validators
    from jsonschema.exceptions import SchemaError

    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"mcp.input_schema is not a valid JSON Schema: {exc.message}") from None


AgentOptions = MCPAgentSpec
ConfigSection = MCPConfigSpec
