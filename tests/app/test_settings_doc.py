"""docs/settings.md is generated from ``Settings``; a stale copy fails here."""

from pathlib import Path

import pytest

from agenthost.app.settings import PROTOCOL_SETTINGS, Settings, known_variables
from agenthost.app.settings_doc import main, render

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_settings_reference_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "settings.md").read_text()
    assert committed == render(), "stale: run `make settings-doc` and commit docs/settings.md"


def test_every_setting_is_described_once_in_its_own_row() -> None:
    # The process's own settings, then each protocol's (from its adapter package).
    models = [Settings, *PROTOCOL_SETTINGS.values()]
    undescribed = [
        name
        for model in models
        for name, field in model.model_fields.items()
        if not field.description
    ]
    assert undescribed == []
    rows = [line for line in render().splitlines() if line.startswith("| `AGENTHOST_")]
    assert [row.split("`")[1] for row in rows] == known_variables()
    assert "AGENTHOST_MCP_STATELESS" in known_variables()


def test_a_row_shows_type_bounds_and_default() -> None:
    text = render()
    assert "| `AGENTHOST_PORT` | integer ≥ 0, ≤ 65535 | `8000` | Port to listen on. |" in text
    assert (
        "| `AGENTHOST_ADAPTERS` | list of `openai`, `a2a`, `mcp`, `acp`, `ag_ui`, `ai_sdk`, "
        "`anthropic`, `orchestrate` | " in text
    )
    assert "| `AGENTHOST_A2A_PUBLIC_URL` | string | unset | " in text
    assert "| `AGENTHOST_SESSION_TTL` | number > 0 | `3600` | " in text


def test_main_prints_the_reference(capsys: pytest.CaptureFixture[str]) -> None:
    main()
    assert capsys.readouterr().out == render()
