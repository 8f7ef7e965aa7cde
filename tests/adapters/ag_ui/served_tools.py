"""The Python tool of the front-end client tests on ``agenthost serve``
(test_served_*.py here and in tests/adapters/ai_sdk), named in their configs."""

from __future__ import annotations

import os
from pathlib import Path


def delete_file(path: str) -> str:
    """Delete a file."""
    # Nothing is deleted: each run adds the path as a line to the file DELETED_LOG
    # names, so the test (another process) counts the runs.
    with Path(os.environ["DELETED_LOG"]).open("a") as log:
        log.write(f"{path}\n")
    return f"deleted {path}"
