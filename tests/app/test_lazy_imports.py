"""A config of agenthost's own agents never imports the framework wrappers' SDKs.

They cost seconds of start-up and tens of MiB (bench/README.md, issue 24); the
registry loads its plugins only when an object needs one. Checked in a fresh
interpreter: the test process has imported them already.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import sys
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

create_app(Settings(config=sys.argv[1]))
frameworks = ("agents", "langgraph", "langchain_core", "pydantic_ai")
print(",".join(name for name in frameworks if name in sys.modules))
"""


def test_an_echo_config_imports_no_framework(tmp_path: Path) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - name: echo\n    description: Echo.\n    model: echo\n")
    done = subprocess.run(
        [sys.executable, "-P", "-c", SCRIPT, str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", f"imported at start-up: {done.stdout.strip()}"
