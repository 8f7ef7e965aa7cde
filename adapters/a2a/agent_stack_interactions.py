"""What a run asks the user, as Agent Stack asks it, and the answers back (pure mapping).

- A tool call waiting for approval (``approval: required``) is an
  ``interactions/approval/v1`` request: the SDK's ``ToolCallApprovalRequest``
  (``action: tool-call``, the tool's ``name``, ``description`` and ``input``, its
  arguments). The response's ``decision`` (``approve`` / ``reject``) decides.
  The SDK's own agents ask so whatever the client declared; the message's text
  still asks "Allow NAME to run with ARGS? Answer yes or no.", so a client that
  reads no metadata answers in text, and a one-field form's answer is taken too.
- An ``ask_user`` question with a form (its ``schema``: flat JSON Schema fields, as
  MCP elicitation takes) is a ``ui/form_request/v1`` form, each field typed as the
  SDK's field models allow (:func:`form_field`); the response's values answer it as
  ``{"action": "accept", "content": {...}}``, each value typed back by the schema.
- A question without a form (or several at once) is a form of one text field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agenthost.agents import ToolCallPart, question_of
from agenthost.agents.tools.approvals import is_approval_request
from agenthost.agents.tools.client import arguments_of, form_of

BASE: Final = "https://a2a-extensions.agentstack.beeai.dev"
FORM: Final = f"{BASE}/ui/form_request/v1"
APPROVAL: Final = f"{BASE}/interactions/approval/v1"
ANSWER: Final = "answer"
"""The one field of the form a question without a form of its own is shown as."""
DECISIONS: Final = ("approve", "reject")


class BadResponse(ValueError):
    """A form or approval response that does not have the shape the SDK's models give it."""


def approval_request(original: ToolCallPart, description: str | None) -> dict[str, Any]:
    """The SDK's ``ToolCallApprovalRequest`` asking to approve the call ``original``."""
    return {
        "action": "tool-call",
        "title": original.name,
        "description": description,
        "name": original.name,
        "input": arguments_of(original),
        "server": None,
    }


def request_metadata(
    pending: Sequence[ToolCallPart],
    originals: Mapping[str, ToolCallPart],
    descriptions: Mapping[str, str],
) -> tuple[str, dict[str, Any]]:
    """What a run waiting for ``pending`` shows: its text and its metadata (an approval
    request, a typed form, or a form of one text field)."""
    questions = "\n".join(q for call in pending if (q := question_of(call))) or (
        "the agent needs input"
    )
    if len(pending) == 1:
        call = pending[0]
        original = originals.get(call.id)
        if is_approval_request(call) and original is not None:
            request = approval_request(original, descriptions.get(original.name))
            return questions, {APPROVAL: request}
        schema = form_of(call)
        if schema is not None and not is_approval_request(call):
            return questions, {FORM: form_render(questions, schema)}
    field = {"id": ANSWER, "label": questions, "type": "text", "required": True}
    return questions, {FORM: {"title": questions, "fields": [field]}}


def form_render(title: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """A form's JSON Schema as the SDK's ``FormRender``."""
    required = set(schema.get("required") or ())
    properties = schema.get("properties") or {}
    fields = [form_field(name, prop, name in required) for name, prop in properties.items()]
    render: dict[str, Any] = {"title": title, "fields": fields}
    if description := schema.get("description"):
        render["description"] = str(description)
    return render


def form_field(name: str, prop: Mapping[str, Any], required: bool) -> dict[str, Any]:
    """One property as a field: an enum (or ``oneOf`` consts) a ``singleselect``, an
    array of them a ``multiselect``, a boolean a ``checkbox``, a ``date`` string a
    ``date``; anything else (strings, numbers) a ``text`` field (the SDK has no number
    field: the answer is typed back by :func:`form_content`)."""
    label = str(prop.get("title") or name)
    field: dict[str, Any] = {"id": name, "label": label, "required": required}
    default = prop.get("default")
    kind = prop.get("type")
    if kind == "array" and (options := _options(prop.get("items") or {})):
        field |= {"type": "multiselect", "options": options}
        if isinstance(default, list):
            field["default_value"] = [str(v) for v in default]
    elif options := _options(prop):
        field |= {"type": "singleselect", "options": options}
        if default is not None:
            field["default_value"] = str(default)
    elif kind == "boolean":
        content = str(prop.get("description") or label)
        field |= {"type": "checkbox", "content": content, "default_value": default is True}
    else:
        field["type"] = "date" if prop.get("format") == "date" else "text"
        if description := prop.get("description"):
            field["placeholder"] = str(description)
        if default is not None:
            field["default_value"] = str(default)
    return field


def _options(prop: Mapping[str, Any]) -> list[dict[str, str]]:
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames") or prop["enum"]
        return [{"id": str(v), "label": str(n)} for v, n in zip(prop["enum"], names, strict=False)]
    choices = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(choices, list) and all(isinstance(c, dict) and "const" in c for c in choices):
        return [
            {"id": str(c["const"]), "label": str(c.get("title") or c["const"])} for c in choices
        ]
    return []


def answer_text(metadata: Mapping[str, Any], pending: Sequence[ToolCallPart]) -> str | None:
    """The answer a message's approval or form response gives the run waiting for
    ``pending`` (None: the message carries neither, its text answers)."""
    if (approval := metadata.get(APPROVAL)) is not None:
        return decision(approval)
    if (form := metadata.get(FORM)) is None:
        return None
    values = form_values(form)
    schema = form_of(pending[0]) if len(pending) == 1 else None
    if schema is not None and not is_approval_request(pending[0]):
        content = form_content(values, schema)
        return json.dumps({"action": "accept", "content": content})
    texts = [v if isinstance(v, str) else json.dumps(v) for v in values.values() if v is not None]
    return "\n".join(texts) or None


def decision(approval: object) -> str:
    """An approval response's decision (``approve`` / ``reject``), checked."""
    chosen = approval.get("decision") if isinstance(approval, dict) else None
    if chosen not in DECISIONS:
        raise BadResponse(f"{APPROVAL}: 'decision' must be 'approve' or 'reject'")
    return str(chosen)


def form_values(form: object) -> dict[str, Any]:
    """A form response's values by field id (``{"values": {id: {"type", "value"}}}``)."""
    values = form.get("values") if isinstance(form, dict) else None
    if not isinstance(values, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("type"), str) for v in values.values()
    ):
        raise BadResponse(f"{FORM}: 'values' must map field ids to {{type, value}} objects")
    return {name: value.get("value") for name, value in values.items()}


def form_content(values: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """The form's values typed as its schema's properties (a text field's number read as
    one; a value that is not one stays text, for the agent to see); unanswered left out."""
    properties = schema.get("properties") or {}
    content: dict[str, Any] = {}
    for name, value in values.items():
        if value is None or value == "":
            continue
        kind = (properties.get(name) or {}).get("type")
        content[name] = _typed(value, kind) if isinstance(value, str) else value
    return content


def _typed(value: str, kind: object) -> Any:
    try:
        if kind == "integer":
            return int(value)
        if kind == "number":
            number = float(value)
            return int(number) if number.is_integer() else number
    except ValueError:
        return value
    return value
