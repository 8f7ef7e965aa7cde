"""The OpenAPI document agrees with the server: schemathesis ``--checks all`` finds nothing.

Against a served process, with auth off and with auth on (sending a key),
bounded: 30 generated cases per operation and phase, a fixed seed (so a
finding reproduces), ~30 s a run. Every status a route answers is documented
with its protocol's error body, 405s list every allowed method, and each
documented request body is accepted in full (issue 17, point 9).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.app.test_server import agenthost_serve

pytestmark = pytest.mark.slow

KEY = "fuzz-key-0123456789abcdef"
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


@pytest.mark.parametrize("auth", [False, True], ids=["auth off", "auth on"])
def test_schemathesis_finds_nothing(tmp_path: Path, auth: bool) -> None:
    env = {"AGENTHOST_ACCESS_LOG": "false", "AGENTHOST_LOOP_STALL_SECONDS": "0"}
    if auth:
        env["AGENTHOST_API_KEYS"] = f"fuzz:{KEY}"
    with agenthost_serve(tmp_path, **env) as (_, url):
        command = [
            str(SCHEMATHESIS),
            "run",
            f"{url}/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            "30",
            "--seed",
            "17",
            "--workers",
            "1",
            "--no-color",
        ]
        if auth:
            command += ["-H", f"Authorization: Bearer {KEY}"]
        # In tmp_path: schemathesis keeps a cache in its working directory.
        run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "unique failure" not in run.stdout and " passed" in run.stdout, run.stdout[-3000:]
