"""The a2a-sdk's own OpenTelemetry spans are off unless the environment asks for them.

They go to the global tracer provider, which agenthost never sets (its traces
have a provider of their own), so they only cost CPU: bench/README.md
(relay.py, session 15). Checked in a fresh interpreter: the switch is read
when the SDK is first imported, and the test process has imported it already.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import sys
from agenthost.app.server import create_app
from agenthost.app.settings import Settings

create_app(Settings(config=sys.argv[1]))
from a2a.utils import telemetry

print(telemetry.otel_enabled)
"""


@pytest.mark.parametrize(("setting", "enabled"), [(None, "False"), ("true", "True")])
def test_the_sdk_spans_follow_its_switch_off_by_default(
    tmp_path: Path, setting: str | None, enabled: str
) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - name: echo\n    description: Echo.\n    model: echo\n")
    env = {k: v for k, v in os.environ.items() if k != "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"}
    if setting is not None:
        env["OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"] = setting
    done = subprocess.run(
        [sys.executable, "-P", "-c", SCRIPT, str(config)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == enabled
