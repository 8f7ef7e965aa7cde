"""The official MCP conformance suite against ``agenthost serve``: the scenarios that pass.

Runs ``tests/conformance/mcp/run.sh`` (both modes, ``--requirements``
2025-11-25 and 2026-07-28) and checks that every scenario listed here
passes with at least one check. Skipped when the suite is not installed
(``tests/conformance/mcp/run.sh --install``), unless
``AGENTHOST_REQUIRE_CONFORMANCE=1`` (CI) makes that a failure. The
scenarios that do not pass, and why: ``tests/conformance/README.md``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]
RUN = REPO / "tests/conformance/mcp/run.sh"
SUITE = REPO / ".tools/conformance/node_modules/.bin/conformance"

BOTH_ERAS = {
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
    "json-schema-2020-12",
}
HANDSHAKE = BOTH_ERAS | {
    "server-initialize",
    "logging-set-level",
    "ping",
    "resources-subscribe",
    "resources-unsubscribe",
    # Server requests inside a call: over the session, or (stateless) on the
    # call's own stream; setLevel kept per session, or (stateless) per principal.
    "tools-call-with-logging",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
}
MODERN = BOTH_ERAS | {
    "server-sse-multiple-streams",
    "sep-2164-resource-not-found",
    "caching",
    "input-required-result-basic-elicitation",
    "input-required-result-request-state",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-result-type",
    "input-required-result-unsupported-methods",
    "input-required-result-tampered-state",
    "input-required-result-ignore-extra-params",
    "input-required-result-validate-input",
    "http-header-validation",
    "tasks-required-task-error",
    "server-stateless",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-multiple-input-requests",
    "input-required-result-capability-check",
    "input-required-result-non-tool-request",
}
PASSING = {
    ("stateless", "2025-11-25"): HANDSHAKE,
    # Only a session has a standalone GET stream.
    ("stateful", "2025-11-25"): HANDSHAKE | {"server-sse-multiple-streams"},
    ("stateless", "2026-07-28"): MODERN,
    ("stateful", "2026-07-28"): MODERN,
}
# MCP tasks (2026-07-28 extension): not every tasks-* scenario passes whole,
# but at least these checks must.
TASK_CHECKS_AT_LEAST = {
    "tasks-lifecycle": 8,
    "tasks-capability-negotiation": 4,
    "tasks-wire-fields": 3,
    "tasks-dispatch-and-envelope": 8,
    "tasks-mrtr-input": 3,
    "tasks-request-headers": 4,
}
SCENARIO = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed", re.MULTILINE)


def passed(summary: str) -> set[str]:
    """The scenarios with a ✓ and at least one passed check."""
    return {m[2] for m in SCENARIO.finditer(summary) if m[1] == "✓" and int(m[3]) > 0}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SUITE.exists() and not os.environ.get("AGENTHOST_REQUIRE_CONFORMANCE"):
        pytest.skip("the MCP conformance suite is not installed: run.sh --install")
    out = tmp_path_factory.mktemp("mcp-conformance")
    subprocess.run([str(RUN), str(out)], check=True, timeout=600, capture_output=True)
    return out


@pytest.mark.parametrize(("mode", "revision"), sorted(PASSING))
def test_the_listed_scenarios_pass(results: Path, mode: str, revision: str) -> None:
    summary = (results / f"{mode}-{revision}.txt").read_text()
    missing = PASSING[mode, revision] - passed(summary)
    assert not missing, f"{mode} {revision}: no longer pass: {sorted(missing)}"


@pytest.mark.parametrize("mode", ["stateless", "stateful"])
def test_the_task_checks_pass(results: Path, mode: str) -> None:
    summary = (results / f"{mode}-2026-07-28.txt").read_text()
    checks = {m[2]: int(m[3]) for m in SCENARIO.finditer(summary)}
    fewer = {k: checks.get(k, 0) for k, n in TASK_CHECKS_AT_LEAST.items() if checks.get(k, 0) < n}
    assert not fewer, f"{mode}: fewer task checks pass: {fewer}"
