import time

import pytest

from agenthost.agents.errors import FatalToolError
from agenthost.agents.tools.builtin import evaluate


@pytest.mark.parametrize(
    "expression",
    [
        "((9**999)**999)**999",
        "(9**999)**999",
        "99**1000",
        "(9**999)*(9**999)",
        "-(9**999)**2",
        "round(10, -100000)",
        "9**9**9",
    ],
)
def test_results_too_large_are_refused_before_they_are_computed(expression: str) -> None:
    started = time.perf_counter()
    with pytest.raises(FatalToolError, match=r"digits|exponent"):
        evaluate(expression)
    # Computed, each would take seconds to forever; refused, microseconds.
    assert time.perf_counter() - started < 0.5


def test_large_results_within_the_bound_still_work() -> None:
    assert str(evaluate("9**999")).startswith("194207916858")
    assert evaluate("2**1000 * 2**1000") == 2**2000
    assert evaluate("min(9**999, 1)**999") == 1
