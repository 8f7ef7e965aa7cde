"""The JSON body limits: each refused naming its setting, strict JSON, counts never over."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import pytest

from agenthost.adapters.body_limits import (
    BodyLimits,
    BodyProblem,
    current_limits,
    load_json,
    load_json_for_sdk,
    use_limits,
)

SMALL = BodyLimits(max_values=1000, max_keys=100, max_depth=10, max_string=2000)


@contextmanager
def limits(bounds: BodyLimits) -> Iterator[None]:
    before = current_limits()
    use_limits(bounds)
    try:
        yield
    finally:
        use_limits(before)


@pytest.mark.parametrize(
    ("value", "setting"),
    [
        ([0] * 1001, "VALUES"),
        ([[0] * 400, [0] * 400, [0] * 400], "VALUES"),
        ({"a": [{"k": i} for i in range(600)]}, "VALUES"),
        ({f"k{i}": 0 for i in range(101)}, "KEYS"),
        ({"a": [[[[[[[[[[[0]]]]]]]]]]]}, "DEPTH"),
        ({"a": "x" * 2001}, "STRING"),
        ({"x" * 2001: 0}, "STRING"),
        (["a,b"] * 1100, "VALUES"),
    ],
)
def test_a_body_past_a_limit_is_refused_naming_it(value: Any, setting: str) -> None:
    with limits(SMALL), pytest.raises(BodyProblem) as refused:
        load_json(orjson.dumps(value))
    assert refused.value.limit == f"AGENTHOST_MAX_JSON_{setting}"


@pytest.mark.parametrize(
    "value",
    [
        [0] * 999,
        {f"k{i}": "a,b,c,d" for i in range(100)},
        {"a": [[[[[[[[0]]]]]]]]},
        ["x" * 2000, 'quote " and , comma'] * 3,
        {"s": "x" * 1999, "t": ["\\", "\\\\", ',"', '":']},
    ],
)
def test_a_body_within_the_limits_is_its_value(value: Any) -> None:
    with limits(SMALL):
        assert load_json(orjson.dumps(value)) == value


@pytest.mark.parametrize(
    "raw",
    [b"[NaN]", b"[Infinity]", b"[-Infinity]", b"[1e999999]", b'["\\ud800"]', b'{"\\udc00": 1}'],
)
def test_json_that_python_reads_but_the_rfc_forbids_is_refused(raw: bytes) -> None:
    with pytest.raises(BodyProblem) as refused:
        load_json(raw)
    assert refused.value.limit is None and refused.value.lenient


def test_integers_over_64_bits_are_read_and_not_json_is_for_the_sdk() -> None:
    assert load_json(b'{"x": ' + b"9" * 30 + b"}")["x"] == pytest.approx(1e30)
    assert load_json_for_sdk(b"{oops") is None
    with pytest.raises(BodyProblem) as refused:
        load_json(b"\xff\xfe")
    assert not refused.value.lenient
