"""Fixtures of the app's tests: log lines as the JSON formatter writes them."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from agenthost.app.logs import JSONFormatter


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(JSONFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def json_lines() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("agenthost")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
