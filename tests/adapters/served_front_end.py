"""What the front-end client tests on ``agenthost serve`` share (test_served_*.py in
tests/adapters/ag_ui and tests/adapters/ai_sdk): the Python tool their configs name,
and the server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.commands import clean_env, serving


def delete_file(path: str) -> str:
    """Delete a file."""
    # Nothing is deleted: each run adds the path as a line to the file DELETED_LOG
    # names, so the test (another process) counts the runs.
    with Path(os.environ["DELETED_LOG"]).open("a") as log:
        log.write(f"{path}\n")
    return f"deleted {path}"


@contextmanager
def served_front_end(
    adapter: str, config: str, upstream_url: str, folder: Path, key: str
) -> Iterator[tuple[str, Path]]:
    """``agenthost serve`` of ``config`` (its ``{upstream}`` the fake upstream's model
    settings) with only ``adapter`` on and the API key ``key``: the server's URL and the
    file that counts :func:`delete_file`'s runs."""
    path = folder / "agents.yaml"
    settings = f'{{base_url: "{upstream_url}", api_key: k, max_retries: 0}}'
    path.write_text(config.format(upstream=settings))
    deleted = folder / "deleted.log"
    env = clean_env(AGENTHOST_ADAPTERS=adapter, AGENTHOST_API_KEYS=key, DELETED_LOG=str(deleted))
    with serving(path, env) as (_, url):
        yield url, deleted
