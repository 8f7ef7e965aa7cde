"""The error ``local`` raises when its runtime does not import names the real cause."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

import pytest

from agenthost.agents.models import local


class _Broken(importlib.abc.MetaPathFinder):
    """Makes importing ``xllamacpp`` fail with ``error``."""

    def __init__(self, error: ImportError) -> None:
        self.error = error

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == "xllamacpp":
            raise self.error
        return None


def _import_error(monkeypatch: pytest.MonkeyPatch, error: ImportError) -> ImportError:
    """The ImportError a fresh import of the ``local`` module raises, given ``error``."""
    monkeypatch.delitem(sys.modules, "xllamacpp", raising=False)
    monkeypatch.delitem(sys.modules, local.__name__)
    monkeypatch.setattr(sys, "meta_path", [_Broken(error), *sys.meta_path])
    with pytest.raises(ImportError) as raised:
        importlib.import_module(local.__name__)
    assert raised.value.__cause__ is error
    return raised.value


def test_a_missing_native_library_is_named_not_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # What a slim Python image says (it lacks the GNU OpenMP runtime).
    cause = ImportError("libgomp.so.1: cannot open shared object file: No such file or directory")
    message = str(_import_error(monkeypatch, cause))
    assert "the native library libgomp.so.1 is missing" in message
    assert "apt-get install libgomp1" in message
    assert "cannot open shared object file" in message
    assert "extra" not in message


def test_another_load_failure_is_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    cause = ImportError("undefined symbol: ggml_init")
    message = str(_import_error(monkeypatch, cause))
    assert message.endswith("installed but does not load (undefined symbol: ggml_init)")


def test_a_missing_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    cause = ModuleNotFoundError("No module named 'xllamacpp'", name="xllamacpp")
    message = str(_import_error(monkeypatch, cause))
    assert message == (
        "the local model provider needs the 'local' extra: pip install 'agenthost[local]'"
    )
