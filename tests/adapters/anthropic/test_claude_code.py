"""Claude Code (the npm package, tests/clients/install.sh) as a client of ``/v1/messages``.

``claude -p`` with ``ANTHROPIC_BASE_URL`` at ``agenthost serve`` and a relay
agent on the fake upstream behind it: it gets an answer, and a call of its
own ``Bash`` tool (a client tool here) round-trips — Claude Code runs the
command and the agent's model reads its output. Skipped without the
package, unless ``AGENTHOST_REQUIRE_CONFORMANCE`` is set (as in CI).
"""

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.commands import serving
from tests.upstream import FakeUpstream

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = ROOT / ".tools" / "clients" / "node_modules" / ".bin" / "claude"
KEY = "claude-key-0123456789abcdef"
CONFIG = """
agents:
  - name: relay
    model: openai:gpt-test
    model_settings: {{base_url: "{url}", api_key: k, max_retries: 0}}
"""


@pytest.fixture(scope="module")
def served(
    upstream: tuple[FakeUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if not CLAUDE.exists():
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
            pytest.fail("Claude Code is missing: run tests/clients/install.sh")
        pytest.skip("no Claude Code: run tests/clients/install.sh")
    _, url = upstream
    config = tmp_path_factory.mktemp("claude") / "agents.yaml"
    config.write_text(CONFIG.format(url=url))
    env = {**os.environ, "AGENTHOST_ADAPTERS": "anthropic", "AGENTHOST_API_KEYS": KEY}
    with serving(config, env) as (_, base):
        yield base


def claude(served: str, tmp_path: Path, *args: str) -> str:
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": served,
        "ANTHROPIC_AUTH_TOKEN": KEY,
        "ANTHROPIC_MODEL": "relay",
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": "relay",  # its own chores (titles…)
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no telemetry, no update checks
        "HOME": str(tmp_path),  # no settings of this machine's user
    }
    run = subprocess.run(
        [str(CLAUDE), "-p", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_claude_code_gets_an_answer(
    served: str, tmp_path: Path, upstream: tuple[FakeUpstream, str]
) -> None:
    # The fake upstream answers "upstream says: <the last user text>"; Claude Code puts a
    # reminder of its own before the prompt.
    answer = claude(served, tmp_path, "hello from claude code")
    assert answer.startswith("upstream says: ") and "hello from claude code" in answer
    # Its default thinking (adaptive, effort "high": Anthropic's default) asks the
    # upstream for no reasoning effort, which a model that does not reason would refuse.
    assert "reasoning_effort" not in upstream[0].requests[-1]


def test_its_own_bash_tool_round_trips(served: str, tmp_path: Path) -> None:
    # "TEXT; use NAME with JSON": the fake upstream calls NAME (here Claude Code's Bash).
    call = '{"command": "echo agenthost-was-here", "description": "print a marker"}'
    answer = claude(served, tmp_path, f"run it; use Bash with {call}", "--allowedTools", "Bash")
    assert answer.strip() == "The result is agenthost-was-here."
