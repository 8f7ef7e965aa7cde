""".dockerignore and .gitignore keep API keys out of images and commits (no engine needed).

Docker's rules, reimplemented small: patterns in order, ``!`` re-includes,
the last match wins, ``**`` spans directories (zero included), and a pattern
that matches a directory excludes what is in it. tests/docker/test_keys.py
checks the same with a real build.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

KEYS_FILES = [
    "config/keys.txt",
    "config/prod/keys.txt",
    "config/api-keys.txt",
    "config/tls.key",
    "config/db-secret.yaml",
    "config/.env",
]
IMAGE_FILES = ["config/agents.yaml", "config/ollama.yaml", "config/agents.schema.json",
               "app/server.py", "pyproject.toml", "uv.lock"]  # fmt: skip


def _regex(pattern: str) -> re.Pattern[str]:
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def _patterns() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        rules.append((negated, _regex(line.lstrip("!").strip("/"))))
    return rules


def sent_to_the_build(path: str) -> bool:
    """Whether ``docker build`` gets ``path`` (relative to the repository) in its context."""
    parts = path.split("/")
    included = True
    for negated, regex in _patterns():
        # A pattern matches the path or one of its parent directories.
        if any(regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts) + 1)):
            included = negated
    return included


def test_the_matcher_follows_dockers_rules() -> None:
    assert not sent_to_the_build("tests/deploy/chart.py")  # `*` excludes everything first
    assert not sent_to_the_build("app/__pycache__/server.cpython-311.pyc")


@pytest.mark.parametrize("path", KEYS_FILES)
def test_keys_files_never_reach_the_build(path: str) -> None:
    assert not sent_to_the_build(path)


@pytest.mark.parametrize("path", IMAGE_FILES)
def test_what_the_image_is_made_of_still_does(path: str) -> None:
    assert sent_to_the_build(path)
    assert (ROOT / path).exists()


def test_no_shipped_config_file_looks_like_a_keys_file() -> None:
    # Were one excluded by the keys patterns, the image would silently lack it.
    shipped = [p.relative_to(ROOT).as_posix() for p in (ROOT / "config").rglob("*") if p.is_file()]
    assert shipped and all(sent_to_the_build(path) for path in shipped)


@pytest.mark.parametrize("path", [*KEYS_FILES, "keys.txt", "secrets/keys.txt"])
def test_git_ignores_keys_files(path: str) -> None:
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "--quiet", path], cwd=ROOT, timeout=30
    )
    assert done.returncode == 0, f"git would commit {path}"
