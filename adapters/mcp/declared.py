"""What the config's ``mcp:`` section declares besides the agents: resources,
resource templates and prompts (with argument completions).

The app hands them over as JSON (``AdapterContext.config``, files already
read); this module maps them to MCP and answers ``resources/read``,
``prompts/get`` and ``completion/complete`` for them. ``{name}`` in a
template's text or a prompt's messages is replaced by the value of that URI
variable or argument (only names it declares; other braces stay as they are).
Declared resources are static: ``resources/subscribe`` is accepted for them,
and no update is ever sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def substitute(text: str, values: Mapping[str, str]) -> str:
    """``{name}`` replaced by ``values[name]``; unknown names are left as written."""
    return _VARIABLE.sub(lambda m: values.get(m[1], m[0]), text)


@dataclass(frozen=True, slots=True)
class _Template:
    spec: Mapping[str, Any]
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> _Template:
        pieces = _VARIABLE.split(spec["uri_template"])
        # Literal text, then a variable, alternately: each variable is one path segment.
        regex = "".join(
            re.escape(piece) if i % 2 == 0 else f"(?P<{piece}>[^/?#]+)"
            for i, piece in enumerate(pieces)
        )
        return cls(spec, re.compile(regex + r"\Z"))


class Declared:
    """The declared resources, templates and prompts, by URI and name."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.resources: dict[str, Mapping[str, Any]] = {
            r["uri"]: r for r in config.get("resources", ())
        }
        self.templates = [_Template.of(t) for t in config.get("resource_templates", ())]
        self.prompts: dict[str, Mapping[str, Any]] = {
            p["name"]: p for p in config.get("prompts", ())
        }

    # Resources ----------------------------------------------------------

    def list_resources(self) -> list[types.Resource]:
        return [
            types.Resource(
                uri=r["uri"],
                name=r["name"],
                title=r.get("title"),
                description=r.get("description"),
                mime_type=r.get("mime_type"),
            )
            for r in self.resources.values()
        ]

    def list_templates(self) -> list[types.ResourceTemplate]:
        return [
            types.ResourceTemplate(
                uri_template=t.spec["uri_template"],
                name=t.spec["name"],
                title=t.spec.get("title"),
                description=t.spec.get("description"),
                mime_type=t.spec.get("mime_type"),
            )
            for t in self.templates
        ]

    def read(self, uri: str) -> types.ReadResourceResult | None:
        """The contents of a declared resource or of a template's match; None: not declared."""
        resource = self.resources.get(uri)
        if resource is not None:
            return types.ReadResourceResult(contents=[_contents(uri, resource)])
        for template in self.templates:
            if (match := template.pattern.match(uri)) is not None:
                text = substitute(template.spec["text"], match.groupdict())
                contents = types.TextResourceContents(
                    uri=uri, text=text, mime_type=template.spec.get("mime_type")
                )
                return types.ReadResourceResult(contents=[contents])
        return None

    def has_template(self, uri_template: str) -> bool:
        return any(t.spec["uri_template"] == uri_template for t in self.templates)

    def has_resource(self, uri: str) -> bool:
        return uri in self.resources or any(t.pattern.match(uri) for t in self.templates)

    # Prompts ------------------------------------------------------------

    def list_prompts(self) -> list[types.Prompt]:
        return [
            types.Prompt(
                name=p["name"],
                title=p.get("title"),
                description=p.get("description"),
                arguments=[
                    types.PromptArgument(
                        name=a["name"], description=a.get("description"), required=a["required"]
                    )
                    for a in p["arguments"]
                ],
            )
            for p in self.prompts.values()
        ]

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None
    ) -> types.GetPromptResult | None:
        """The prompt's messages, arguments filled in; None: no such declared prompt."""
        prompt = self.prompts.get(name)
        if prompt is None:
            return None
        values = dict(arguments or {})
        missing = [
            a["name"] for a in prompt["arguments"] if a["required"] and a["name"] not in values
        ]
        if missing:
            raise MCPError(types.INVALID_PARAMS, f"missing prompt argument: {', '.join(missing)}")
        messages = [
            types.PromptMessage(role=m["role"], content=_prompt_content(m, values))
            for m in prompt["messages"]
        ]
        return types.GetPromptResult(description=prompt.get("description"), messages=messages)

    def to_elicit(
        self, name: str, arguments: Mapping[str, str] | None
    ) -> types.ElicitRequestFormParams | None:
        """The form asking the user for the prompt's ``elicit`` arguments the request
        lacks (each one's description is its question); None: nothing to ask."""
        prompt = self.prompts.get(name)
        given = arguments or {}
        wanted = [
            a
            for a in (prompt["arguments"] if prompt is not None else ())
            if a.get("elicit") and a["name"] not in given
        ]
        if not wanted:
            return None
        schema: types.ElicitRequestedSchema = {
            "type": "object",
            "properties": {
                a["name"]: {"type": "string", "description": a.get("description") or a["name"]}
                for a in wanted
            },
            "required": [a["name"] for a in wanted if a["required"]],
        }
        message = "\n".join(a.get("description") or a["name"] for a in wanted)
        return types.ElicitRequestFormParams(message=message, requested_schema=schema)

    def complete(self, name: str, argument: str, value: str) -> types.Completion | None:
        """The argument's declared values that start with ``value``; None: no such prompt."""
        prompt = self.prompts.get(name)
        if prompt is None:
            return None
        spec = next((a for a in prompt["arguments"] if a["name"] == argument), None)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown argument: {argument}")
        values = [v for v in spec["completions"] if v.startswith(value)]
        return types.Completion(values=values[:100], total=len(values), has_more=len(values) > 100)


def _contents(
    uri: str, spec: Mapping[str, Any]
) -> types.TextResourceContents | types.BlobResourceContents:
    if spec.get("text") is not None:
        return types.TextResourceContents(
            uri=uri, text=spec["text"], mime_type=spec.get("mime_type")
        )
    return types.BlobResourceContents(uri=uri, blob=spec["blob"], mime_type=spec.get("mime_type"))


def _prompt_content(
    message: Mapping[str, Any], values: Mapping[str, str]
) -> types.TextContent | types.ImageContent | types.EmbeddedResource:
    if message.get("text") is not None:
        return types.TextContent(type="text", text=substitute(message["text"], values))
    if message.get("image") is not None:
        image = message["image"]
        return types.ImageContent(
            type="image", data=image["blob"], mime_type=image.get("mime_type") or "image/png"
        )
    resource = message["resource"]
    contents = types.TextResourceContents(
        uri=substitute(resource["uri"], values),
        text=substitute(resource["text"], values),
        mime_type=resource.get("mime_type"),
    )
    return types.EmbeddedResource(type="resource", resource=contents)
