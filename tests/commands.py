"""The ``agenthost`` command as the tests start it.

``python -P``: the working directory stays off sys.path, so the repository's
``agents/`` never shadows the OpenAI Agents SDK's ``agents`` (tests/conftest.py
puts the tests on PYTHONPATH instead).
"""

from __future__ import annotations

import sys
from pathlib import Path


def agenthost(*args: str) -> list[str]:
    """``python -P -m agenthost.app ARGS``."""
    return [sys.executable, "-P", "-m", "agenthost.app", *args]


def serve_command(config: Path, port: int) -> list[str]:
    """``agenthost serve`` of ``config`` on 127.0.0.1:``port``."""
    return agenthost("serve", "--config", str(config), "--port", str(port))
