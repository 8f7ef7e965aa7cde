"""The A2A examples of the README and docs/protocols/a2a.md, run as a user pastes them.

Each Python block is run as it is written against ``agenthost serve`` of the
default config (``config/agents.yaml``), with only the port changed from
8000 to a free one; it must print the echo agent's answer. The server gets
the default config's ``echo`` entry only: the examples call echo, and loading
the embedded model of ``assistant`` would add a minute.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.commands import clean_env, serving

ROOT = Path(__file__).resolve().parents[3]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def a2a_block(doc: str, marker: str) -> str:
    """The one Python block of ``doc`` that contains ``marker``."""
    blocks = [b for b in BLOCK.findall((ROOT / doc).read_text()) if marker in b]
    assert len(blocks) == 1, f"{doc}: {len(blocks)} Python blocks contain {marker!r}"
    return blocks[0]


EXAMPLES = {
    "README": a2a_block("README.md", "new_text_message"),
    "a2a.md": a2a_block("docs/protocols/a2a.md", "async def ask"),
}


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    default = yaml.safe_load((ROOT / "config" / "agents.yaml").read_text())
    config = tmp_path_factory.mktemp("examples") / "agents.yaml"
    config.write_text(
        yaml.safe_dump({"agents": [a for a in default["agents"] if a["name"] == "echo"]})
    )
    env = clean_env(AGENTHOST_ADAPTERS="a2a", AGENTHOST_ACCESS_LOG="false")  # what they use
    with serving(config, env) as (_, url):
        yield int(url.rsplit(":", 1)[1])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_the_a2a_example_prints_the_answer(port: int, name: str, tmp_path: Path) -> None:
    code = EXAMPLES[name]
    assert "localhost:8000" in code
    script = tmp_path / "example.py"
    script.write_text(code.replace("localhost:8000", f"localhost:{port}"))
    done = subprocess.run(
        [sys.executable, "-P", str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello\n", done.stdout
