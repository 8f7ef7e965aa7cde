"""Config-declared MCP features through the official Python client: typed tool
arguments (``mcp.input_schema``), resources, resource templates, prompts,
completions, and questions asked with a form (elicitation with a schema)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    BlobResourceContents,
    ElicitRequestParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

from agenthost.app.config import ConfigError
from agenthost.app.server import create_app
from tests.adapters.mcp.helpers import mcp_client, mcp_settings, running_app
from tests.upstream import serve_in_thread

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nnot really").decode()
CONFIG = """
agents:
  - name: echo
    model: echo
  - name: greet
    model: echo
    mcp:
      input_schema:
        type: object
        properties: {name: {type: string}, times: {type: integer, minimum: 1}}
        required: [name]
      message: "Hello {name} x{times}"
  - name: lookup
    import: tests.adapters.mcp.form_agents:arguments_echo
    mcp:
      task_support: required
      input_schema:
        $schema: https://json-schema.org/draft/2020-12/schema
        type: object
        $defs: {id: {type: string, minLength: 2}}
        properties: {id: {$ref: "#/$defs/id"}, session_id: {type: string}}
        required: [id]
        additionalProperties: false
  - name: signup
    import: tests.adapters.mcp.form_agents:signup
mcp:
  resources:
    - {uri: "docs://guide", name: guide, description: The guide, mime_type: text/markdown,
       text: "# Guide"}
    - {uri: "docs://logo", name: logo, mime_type: image/png, file: logo.png}
  resource_templates:
    - {uri_template: "notes://{id}/text", name: note, mime_type: text/plain,
       text: "Note {id} ({other} stays)"}
  prompts:
    - name: review
      description: Review some code
      arguments:
        - {name: language, required: true, completions: [python, perl, rust]}
        - {name: focus}
      messages:
        - text: "Review this {language} code for {focus}."
        - {role: assistant, text: "Paste it."}
        - resource: {uri: "code://{language}", text: "print(1)"}
        - image: {mime_type: image/png, file: logo.png}
    - name: brief
      arguments:
        - {name: topic, description: "Which topic?", required: true, elicit: true}
      messages:
        - text: "Brief me on {topic}."
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("declared")
    (folder / "logo.png").write_bytes(base64.b64decode(PNG))
    path = folder / "agents.yaml"
    path.write_text(CONFIG)
    return path


@pytest.fixture(scope="module")
async def app(config: Path) -> AsyncIterator[FastAPI]:
    async with running_app(None, mcp_settings(config=config, adapters=["mcp"])) as served:  # type: ignore[arg-type]
        yield served


def text(result: Any) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


async def test_a_typed_tool_lists_its_schema_as_written(app: FastAPI) -> None:
    async with mcp_client(app, mode="legacy") as client:  # execution is a 2025-11-25 field
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["greet"].input_schema["required"] == ["name"]
    lookup = tools["lookup"].input_schema
    assert lookup["$schema"].endswith("2020-12/schema")
    assert lookup["$defs"] == {"id": {"type": "string", "minLength": 2}}
    assert lookup["additionalProperties"] is False
    assert tools["lookup"].execution is not None
    assert tools["lookup"].execution.task_support == "required"
    assert set(tools["echo"].input_schema["properties"]) == {"message", "session_id"}


async def test_typed_arguments_are_rendered_into_the_message(app: FastAPI) -> None:
    async with mcp_client(app) as client:
        result = await client.call_tool("greet", {"name": "Ada", "times": 2})
    assert not result.is_error
    assert text(result) == "Hello Ada x2"


async def test_arguments_that_break_the_schema_are_invalid_params(app: FastAPI) -> None:
    async with mcp_client(app) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("greet", {"name": "Ada", "times": 0})
        assert raised.value.error.code == -32602
        assert "times" in raised.value.error.message
        with pytest.raises(MCPError):
            await client.call_tool("greet", {"times": 1})  # name is required


async def test_a_required_task_tool_refuses_a_client_without_tasks(app: FastAPI) -> None:
    async with mcp_client(app) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("lookup", {"id": "abc"})
    assert raised.value.error.code == -32021
    assert raised.value.error.data["requiredCapabilities"]["extensions"]


async def test_declared_resources_are_listed_and_read(app: FastAPI) -> None:
    async with mcp_client(app) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        guide = (await client.read_resource("docs://guide")).contents[0]
        logo = (await client.read_resource("docs://logo")).contents[0]
        templates = (await client.list_resource_templates()).resource_templates
        note = (await client.read_resource("notes://42/text")).contents[0]
        with pytest.raises(MCPError):
            await client.read_resource("notes://4/2/text")  # one variable, one segment
    assert {"docs://guide", "docs://logo", "agent://echo"} <= set(listed)
    assert listed["docs://guide"].description == "The guide"
    assert isinstance(guide, TextResourceContents) and guide.text == "# Guide"
    assert guide.mime_type == "text/markdown"
    assert isinstance(logo, BlobResourceContents) and logo.blob == PNG
    assert [t.uri_template for t in templates] == ["notes://{id}/text"]
    assert isinstance(note, TextResourceContents)
    assert note.text == "Note 42 ({other} stays)"


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_declared_resource_can_be_subscribed_to(app: FastAPI) -> None:
    async with mcp_client(app, mode="legacy") as client:  # 2026-07-28 removed it
        assert client.server_capabilities.resources.subscribe  # type: ignore[union-attr]
        await client.subscribe_resource("docs://guide")
        await client.unsubscribe_resource("docs://guide")
        with pytest.raises(MCPError):
            await client.subscribe_resource("docs://nope")


async def test_declared_prompts_fill_their_arguments(app: FastAPI) -> None:
    async with mcp_client(app) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        got = await client.get_prompt("review", {"language": "python", "focus": "bugs"})
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("review", {"focus": "bugs"})
    assert [a.name for a in prompts["review"].arguments or []] == ["language", "focus"]
    assert "echo" in prompts  # the agents' own prompts stay
    first, second, third, fourth = got.messages
    assert isinstance(first.content, TextContent)
    assert first.content.text == "Review this python code for bugs."
    assert second.role == "assistant"
    assert isinstance(third.content, EmbeddedResource)
    assert str(third.content.resource.uri) == "code://python"
    assert isinstance(fourth.content, ImageContent) and fourth.content.data == PNG
    assert raised.value.error.code == -32602


class Topic:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action="accept", content={"topic": "tides"})


async def test_a_prompt_asks_the_user_for_an_elicit_argument(app: FastAPI) -> None:
    user = Topic()
    async with mcp_client(app, mode="2026-07-28", elicitation_callback=user) as client:
        asked = await client.get_prompt("brief")
        given = await client.get_prompt("brief", {"topic": "waves"})
    assert user.asked == ["Which topic?"]
    for got, topic in ((asked, "tides"), (given, "waves")):
        first = got.messages[0].content
        assert isinstance(first, TextContent) and first.text == f"Brief me on {topic}."


async def test_a_client_that_cannot_be_asked_gets_the_missing_argument_error(
    app: FastAPI,
) -> None:
    async with mcp_client(app, mode="legacy") as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("brief")
    assert raised.value.error.code == -32602


async def test_completion_offers_the_declared_values(app: FastAPI) -> None:
    async with mcp_client(app) as client:
        ref = {"type": "ref/prompt", "name": "review"}
        done = await client.complete(ref, {"name": "language", "value": "p"})
        none = await client.complete(ref, {"name": "focus", "value": "x"})
        template = {"type": "ref/resource", "uri": "notes://{id}/text"}
        free = await client.complete(template, {"name": "id", "value": "4"})
        with pytest.raises(MCPError):
            await client.complete(ref, {"name": "nope", "value": ""})
    assert done.completion.values == ["python", "perl"]
    assert none.completion.values == []
    assert free.completion.values == []


def test_a_prompt_named_like_an_agent_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n  - {name: echo, model: echo}\n"
        "mcp:\n  prompts:\n    - {name: echo, messages: [{text: hi}]}\n"
    )
    with pytest.raises(ValueError, match="echo"):
        create_app(mcp_settings(config=path, adapters=["mcp"]))


def test_a_missing_resource_file_names_the_section(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n  - {name: echo, model: echo}\n"
        "mcp:\n  resources:\n    - {uri: 'a://b', name: b, file: nope.txt}\n"
    )
    with pytest.raises(ConfigError, match="mcp"):
        create_app(mcp_settings(config=path, adapters=["mcp"]))


class Form:
    """An elicitation callback that answers the form (or declines) and records the request."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.asked: list[ElicitRequestParams] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.asked.append(params)
        if self.action != "accept":
            return ElicitResult(action=self.action)  # type: ignore[arg-type]
        return ElicitResult(action="accept", content={"username": "ada", "age": 36})


@pytest.mark.slow
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_a_question_with_a_form_is_elicited_with_its_schema(
    config: Path, action: str
) -> None:
    form = Form(action)
    app = create_app(mcp_settings(config=config, adapters=["mcp"], mcp_stateless=False))
    with serve_in_thread(app, lifespan=True) as url:
        async with Client(f"{url}/mcp", mode="legacy", elicitation_callback=form) as client:
            result = await client.call_tool("signup", {})
    assert not result.is_error
    (asked,) = form.asked
    schema = asked.requested_schema  # type: ignore[union-attr]
    assert schema["properties"]["age"] == {"type": "integer", "default": 30}
    assert schema["required"] == ["username"]
    if action == "accept":
        assert text(result) == 'signed up: accept {"username":"ada","age":36}'
    else:
        assert text(result) == "signed up: decline null"


async def test_a_2026_client_answers_a_form_through_an_input_required_round(app: FastAPI) -> None:
    form = Form("accept")
    async with mcp_client(app, mode="2026-07-28", elicitation_callback=form) as client:
        result = await client.call_tool("signup", {})
    assert text(result) == 'signed up: accept {"username":"ada","age":36}'
    (asked,) = form.asked
    assert asked.requested_schema["required"] == ["username"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "mcp",
    [
        {"message": "hi {x}"},  # a template needs a schema
        {"input_schema": {"type": "string"}},  # arguments are an object
    ],
)
def test_an_inconsistent_agent_mcp_section_is_a_config_error(mcp: dict[str, Any]) -> None:
    from pydantic import ValidationError

    from agenthost.adapters.mcp.specs import MCPAgentSpec

    with pytest.raises(ValidationError):
        MCPAgentSpec.model_validate(mcp)


def test_a_resource_needs_exactly_one_source() -> None:
    from pydantic import ValidationError

    from agenthost.adapters.mcp.specs import ResourceSpec

    with pytest.raises(ValidationError, match="exactly one"):
        ResourceSpec.model_validate({"uri": "a://b", "name": "b", "text": "x", "blob": "eA=="})


def test_an_invalid_input_schema_is_refused_at_start(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n  - name: echo\n    model: echo\n"
        "    mcp: {input_schema: {type: object, properties: {a: {type: 12}}}}\n"
    )
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        create_app(mcp_settings(config=path, adapters=["mcp"]))


async def test_a_required_task_tool_runs_as_a_task_with_its_arguments_as_data(
    app: FastAPI,
) -> None:
    from tests.adapters.mcp.test_tasks import Tasks

    tasks = Tasks()
    async with mcp_client(app, extensions=[tasks]) as client:
        result = await client.call_tool("lookup", {"id": "abc", "session_id": "s1"})
    assert tasks.seen[0]["resultType"] == "task"
    assert text(result) == '[{"id":"abc"}]'  # session_id names the conversation, not data


async def test_a_request_state_naming_no_waiting_question_is_invalid_params(app: FastAPI) -> None:
    answer = {"who": ElicitResult(action="accept", content={"username": "ada"})}
    async with mcp_client(app, mode="2026-07-28") as client:
        for state in ("never-asked/who", "tampered"):
            with pytest.raises(MCPError) as raised:
                await client.call_tool("signup", {}, input_responses=answer, request_state=state)
            assert raised.value.error.code == -32602
