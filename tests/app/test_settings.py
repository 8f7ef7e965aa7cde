"""Settings: each protocol's own, assembled from the adapters table; unknown variables named."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pydantic import ValidationError

from agenthost.app.protocols import ADAPTERS, package
from agenthost.app.settings import PROTOCOL_SETTINGS, Settings, known_variables, unknown_variables
from tests.commands import agenthost, clean_env


def test_a_protocols_setting_is_given_by_its_flat_name_and_read_from_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTHOST_MCP_STATELESS", "false")
    monkeypatch.setenv("AGENTHOST_ACP_MAX_RUNS", "7")
    settings = Settings(a2a_grpc_port=50051, mcp_allowed_hosts="a.example, b.example")
    assert settings.protocol("a2a").grpc_port == 50051  # type: ignore[attr-defined]
    mcp = settings.protocol("mcp")
    assert mcp.allowed_hosts == ["a.example", "b.example"]  # type: ignore[attr-defined]
    assert mcp.stateless is False  # type: ignore[attr-defined]
    assert settings.protocol("acp").max_runs == 7  # type: ignore[attr-defined]
    assert list(settings.protocols) == list(ADAPTERS)


def test_a_misspelt_protocol_setting_is_refused_not_ignored() -> None:
    with pytest.raises(ValidationError, match="grpc_prot"):
        Settings(a2a_grpc_prot=50051)


def test_each_protocol_owns_its_settings_under_its_own_prefix() -> None:
    for name, model in PROTOCOL_SETTINGS.items():
        assert model is package(name).Settings
        assert model.model_config.get("env_prefix") == f"AGENTHOST_{name.upper()}_"
    known = known_variables()
    # The names users set before the settings moved into the adapters.
    for variable in (
        "AGENTHOST_A2A_GRPC_PORT",
        "AGENTHOST_MCP_STATELESS",
        "AGENTHOST_ACP_MAX_RUNS",
    ):
        assert variable in known
    assert len(known) == len(set(known))


def test_an_unknown_variable_is_named_with_the_closest_known_one() -> None:
    environ = [
        "AGENTHOST_API_KEY",
        "AGENTHOST_MCP_STATELES",
        "AGENTHOST_PORT",
        "AGENTHOST_POD_IP",  # the Helm chart's, not a setting
        "AGENTHOST_PUBLISH",  # compose.yaml's, read on the host
        "AGENTHOST_REQUIRE_DOCKER",  # the test suite's switch
        "AGENTHOST_QQQQQQ",
        "PATH",
    ]
    assert unknown_variables(environ) == [
        ("AGENTHOST_API_KEY", "AGENTHOST_API_KEYS"),
        ("AGENTHOST_MCP_STATELES", "AGENTHOST_MCP_STATELESS"),
        ("AGENTHOST_QQQQQQ", None),
    ]


def test_agenthost_check_warns_of_a_misspelt_variable(tmp_path: Path) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - name: echo\n    description: Echo.\n    model: echo\n")
    done = subprocess.run(
        agenthost("check", "--config", str(config)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=clean_env(AGENTHOST_API_KEY="a-key-of-sixteen-chars", AGENTHOST_PORT="8001"),
    )
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "AGENTHOST_API_KEY " in line]
    assert warned == [
        "AGENTHOST_API_KEY is not a setting and is ignored; did you mean AGENTHOST_API_KEYS?"
    ]
    assert "AGENTHOST_PORT" not in done.stderr


def test_settings_validated_from_a_mapping_read_each_protocols_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTHOST_A2A_TASK_MAX", "3")
    settings = Settings.model_validate({"port": 9000})
    assert settings.port == 9000
    assert settings.protocol("a2a").task_max == 3  # type: ignore[attr-defined]


def test_a_list_that_lists_nothing_is_refused_for_the_app_and_a_protocol() -> None:
    with pytest.raises(ValidationError, match="lists nothing"):
        Settings(cors_origins=" , ")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="lists nothing"):
        Settings(mcp_allowed_hosts=" , ")
    assert Settings(mcp_allowed_hosts="a.example, b.example").protocol("mcp").model_dump()[
        "allowed_hosts"
    ] == ["a.example", "b.example"]
