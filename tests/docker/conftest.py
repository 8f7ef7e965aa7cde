"""One image per variant for every test here, built once per session."""

from __future__ import annotations

import pytest

from tests.docker.engine import IMAGE, SLIM_IMAGE, build, require_engine


@pytest.fixture(scope="session")
def image() -> str:
    """The default image (every protocol, the embedded model), built from the repository."""
    require_engine()
    build(IMAGE)
    return IMAGE


@pytest.fixture(scope="session")
def slim_image() -> str:
    """The ``VARIANT=slim`` image: no llama.cpp runtime, no model."""
    require_engine()
    build(SLIM_IMAGE, "VARIANT=slim")
    return SLIM_IMAGE
