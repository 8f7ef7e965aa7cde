import json
import socket
from pathlib import Path

import pytest

from agenthost.app.build import build_registry, load_agents
from agenthost.app.cli import main
from agenthost.app.config import ConfigError, load_config
from agenthost.app.specs import ChatAgentSpec, ConfigSpec, ImportAgentSpec

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["agents.yaml", "ollama.yaml"])
def test_the_shipped_configs_build(name: str) -> None:
    registry = build_registry(load_config(ROOT / "config" / name, environ={}))
    assert {"echo", "assistant"} <= set(registry)


def test_the_issue_example_loads_with_the_key_from_the_environment(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
agents:
  - name: echo
    description: Repeats what you say.
    model: echo
  - name: assistant
    description: General assistant.
    model: openai:gpt-4o-mini
    model_settings:
      base_url: http://127.0.0.1:8080/v1
      api_key: ${OPENAI_API_KEY}
    instructions: You are a helpful assistant.
    tools: [calculator, current_time]
""",
    )
    config = load_config(path, environ={"OPENAI_API_KEY": "sk-secret"})
    assistant = config.agents[1]
    assert isinstance(assistant, ChatAgentSpec)
    assert assistant.model_settings.api_key is not None
    assert assistant.model_settings.api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(config)
    registry = build_registry(config)
    assert list(registry) == ["echo", "assistant"]


def test_a_missing_variable_is_named_and_defaults_apply(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "agents:\n  - name: a\n    model: openai:${MODEL:-m1}\n"
        "    model_settings: {api_key: '${KEY}'}\n",
    )
    with pytest.raises(
        ConfigError, match=r"agent 'a': model_settings.api_key: environment variable KEY is not set"
    ):
        load_config(path, environ={})
    config = load_config(path, environ={"KEY": "k"})
    assert config.agents[0].model == "openai:m1"  # type: ignore[union-attr]


def test_escaped_dollar_stays_literal(tmp_path: Path) -> None:
    path = write(
        tmp_path, "agents:\n  - name: a\n    model: echo\n    instructions: cost $${PRICE}\n"
    )
    assert load_config(path, environ={}).agents[0].instructions == "cost ${PRICE}"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "agents:\n  - name: a\n    model: echo\n    temprature: 1\n",
            r"agents.yaml: agent 'a': temprature: Extra inputs are not permitted",
        ),
        (
            "agents:\n  - name: a\n    model: echo\n    model_settings: {timeout: -1}\n",
            r"agent 'a': model_settings.timeout: Input should be greater than 0",
        ),
        ("agents:\n  - model: echo\n", r"agents\[0\]: name: Field required"),
        ("agents: []\n", r"agents: List should have at least 1 item"),
        ("agents:\n  - name: a\n  model: echo\n", r"not valid YAML"),
        ("- just a list\n", r"expected a mapping with an 'agents' list"),
    ],
)
def test_bad_config_names_file_agent_and_field(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, body), environ={})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "agents:\n  - {name: a, model: echo, tools: [shell]}\n",
            r"agent 'a': tools.0: unknown tool 'shell'; "
            r"built-in tools: ask_client_model, ask_user, calculator, current_time, http_get, "
            r"list_roots, think",
        ),
        ("agents:\n  - {name: a, model: gpt-4}\n", r"agent 'a': model: unknown model 'gpt-4'"),
        (
            "agents:\n  - {name: a, model: echo}\n  - {name: a, model: echo}\n",
            r"agent 'a': duplicate agent name 'a'",
        ),
        (
            "agents:\n  - {name: a, import: 'tests.app.sample_agents:nothing'}\n",
            r"agent 'a': import: cannot import",
        ),
        (
            "agents:\n  - {name: a, model: 'local:/nope.gguf'}\n",
            r"agent 'a': model: no model file at '/nope.gguf'",
        ),
        (
            "agents:\n  - {name: a, import: 'tests.app.sample_agents:not_an_agent'}\n",
            r"agent 'a': no agent factory for type int; "
            r"known types: .*agenthost.agents.agent.BaseAgent, .*function",
        ),
    ],
)
def test_unservable_agents_fail_at_start_up(tmp_path: Path, body: str, message: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(ConfigError, match=message) as caught:
        load_agents(path)
    assert str(caught.value).startswith(f"{path}: agent 'a': ")


def test_import_agents_from_code(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "agents:\n"
        "  - {name: shout, import: 'tests.app.sample_agents:shout'}\n"
        "  - {name: greeter, import: 'tests.app.sample_agents:greeter'}\n",
    )
    config = load_config(path, environ={})
    assert isinstance(config.agents[0], ImportAgentSpec)
    registry = build_registry(config)
    assert registry["shout"].description == "Answers in capitals."
    assert registry["greeter"].name == "greeter"


def test_the_committed_schema_is_up_to_date() -> None:
    committed = json.loads((ROOT / "config" / "agents.schema.json").read_text())
    assert committed == ConfigSpec.model_json_schema(by_alias=True)


def test_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path, "agents:\n  - {name: e, model: echo, description: Echoes.}\n")
    assert main(["check", "--config", str(good)]) == 0
    assert "e\techo\tEchoes." in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("agents:\n  - {name: e, model: nope}\n")
    assert main(["check", "--config", str(bad)]) == 2
    assert "unknown model 'nope'" in capsys.readouterr().err
    assert main(["check", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_schema_command_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == ConfigSpec.model_json_schema(by_alias=True)


def test_bad_settings_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTHOST_SESSION_MAX", "zero")
    good = write(tmp_path, "agents:\n  - {name: e, model: echo}\n")
    assert main(["check", "--config", str(good)]) == 2
    err = capsys.readouterr().err
    assert "invalid settings" in err
    # Each error names its variable (a protocol's with its prefix), never the value.
    assert "AGENTHOST_SESSION_MAX: Input should be a valid integer" in err
    monkeypatch.delenv("AGENTHOST_SESSION_MAX")
    monkeypatch.setenv("AGENTHOST_A2A_GRPC_PORT", "secret-looking-value")
    assert main(["check", "--config", str(good)]) == 2
    err = capsys.readouterr().err
    assert "AGENTHOST_A2A_GRPC_PORT: Input should be a valid integer" in err
    assert "secret-looking-value" not in err


def test_a_misspelt_key_gets_a_suggestion_and_yaml_errors_name_the_file(tmp_path: Path) -> None:
    typo = write(tmp_path, "agents:\n  - name: a\n    model: echo\n    instuctions: hi\n")
    with pytest.raises(ConfigError, match=r"instuctions: .*did you mean 'instructions'"):
        load_config(typo)
    broken = write(tmp_path, "agents:\n  - name: a\n    model: echo\n   bad: [\n")
    with pytest.raises(ConfigError) as caught:
        load_config(broken)
    assert f'in "{broken}", line' in str(caught.value)
    assert "unicode string" not in str(caught.value)


def test_a_port_in_use_is_said_before_anything_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path, "agents:\n  - {name: e, model: echo}\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--config", str(good), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port} is already in use" in err and "AGENTHOST_PORT" in err


@pytest.mark.parametrize(
    ("yaml", "said"),
    [
        # A key of the top level is matched against the top level's keys only
        # (`agent` is a workflow step's key: "did you mean 'agent'?" before).
        (
            "agent:\n  - {name: a, model: echo}\n",
            "agent: Extra inputs are not permitted; did you mean 'agents'?",
        ),
        (
            "agents:\n  - {name: a, model: echo, limits: {max_secs: 3}}\n",
            "limits.max_secs: Extra inputs are not permitted; did you mean 'max_seconds'?",
        ),
        (
            "agents:\n  - {name: a, kind: workflw, model: echo}\n",
            "agent 'a': kind: unknown kind 'workflw'; use one of chat, pipeline, workflow "
            "(or import: for an agent from code); did you mean 'workflow'?",
        ),
        (
            "agents:\n  - {name: a, model: ecoh}\n",
            "agent 'a': model: unknown model 'ecoh' (did you mean 'echo'?); use one of echo,",
        ),
        (
            "agents:\n  - {name: a, model: 'opneai:gpt-4o'}\n",
            "unknown model 'opneai:gpt-4o' (did you mean 'openai:<model>'?)",
        ),
        (
            "agents:\n  - {name: a, model: echo, tools: [calculater]}\n",
            "agent 'a': tools.0: unknown tool 'calculater' (did you mean 'calculator'?); built-in",
        ),
    ],
)
def test_a_misspelt_name_gets_the_one_it_meant(tmp_path: Path, yaml: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_agents(write(tmp_path, yaml))
    assert said in str(caught.value)


def test_a_quotas_file_yaml_error_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    quotas = tmp_path / "quotas.yaml"
    quotas.write_text("default: {requests_per_minute: [\n")
    monkeypatch.setenv("AGENTHOST_QUOTAS_FILE", str(quotas))
    assert (
        main(["check", "--config", str(write(tmp_path, "agents:\n  - {name: e, model: echo}\n"))])
        == 2
    )
    err = capsys.readouterr().err
    assert f'in "{quotas}", line 2' in err and "unicode string" not in err
