"""What ``agenthost`` says when it cannot start: each message names what to change."""

from __future__ import annotations

import re
import socket
import subprocess
from pathlib import Path

import pytest

from agenthost.app.cli import main
from tests.commands import agenthost, clean_env

NO_KEY = "agents:\n  - {name: gpt, model: 'openai:gpt-4o-mini'}\n"


def test_help_is_plain_text_and_lists_every_command() -> None:
    done = subprocess.run(
        agenthost("--help"), env=clean_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "``" not in text and ":ref:" not in text  # a docstring's RST is no help text
    usage = re.search(r"\{([a-z,-]+)\}", text)
    assert usage is not None, text
    commands = usage.group(1).split(",")
    assert {"serve", "check", "schema", "mcp-stdio", "acp-stdio"} <= set(commands)
    for command in commands:  # each with a line saying what it does
        assert re.search(rf"^ {{4}}{command} +\w", text, re.MULTILINE), (command, text)


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    (tmp_path / "agents.yaml").write_text(NO_KEY)
    return tmp_path / "agents.yaml"


def test_openai_without_a_key_is_refused_by_check_and_serve(
    no_key: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("check", "serve"):
        argv = [command, "--config", str(no_key)] + (["--port", "0"] if command == "serve" else [])
        assert main(argv) == 2, command
        err = capsys.readouterr().err
        assert "agent 'gpt': model 'openai:gpt-4o-mini' is served by api.openai.com" in err
        assert "set OPENAI_API_KEY in the environment" in err


def test_the_port_is_checked_before_any_agent_is_built(
    no_key: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The config's agent cannot be built: the port's error comes first, so a port in
    # use is said before a model would load.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--config", str(no_key), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port} is already in use" in err and "AGENTHOST_PORT" in err
    assert "API key" not in err


def test_a_setting_that_does_not_parse_names_its_variable(
    no_key: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTHOST_PORT", "abc")
    assert main(["serve", "--config", str(no_key)]) == 2
    err = capsys.readouterr().err
    assert "AGENTHOST_PORT: Input should be a valid integer" in err
    assert "\n  port:" not in err and "abc" not in err


def test_check_counts_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "agents.yaml").write_text("agents:\n  - {name: echo, model: echo}\n")
    assert main(["check", "--config", str(tmp_path / "agents.yaml")]) == 0
    assert capsys.readouterr().out.endswith(": 1 agent OK\n")


def test_an_unknown_session_store_is_refused_before_start_without_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: check passed, and serve failed in its lifespan with a traceback.
    (tmp_path / "agents.yaml").write_text("agents:\n  - {name: echo, model: echo}\n")
    monkeypatch.setenv("AGENTHOST_SESSION_STORE", "mongodb://app:hunter2@db:27017")
    for command in ("check", "serve"):
        port = ["--port", "0"] if command == "serve" else []
        assert main([command, "--config", str(tmp_path / "agents.yaml"), *port]) == 2
        err = capsys.readouterr().err
        assert "AGENTHOST_SESSION_STORE: use 'memory' or a Redis URL (redis://" in err
        assert "hunter2" not in err and "Value error" not in err
