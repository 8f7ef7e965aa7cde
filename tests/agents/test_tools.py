import asyncio
import re

import pytest

from agents import ToolError, tool
from agents.tools import calculator, current_time

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int = 1) -> int:
    """Add two integers.

    Longer text that is not part of the description.
    """
    return a + b


@tool(name="slow_upper", retries=1)
async def upper(text: str) -> str:
    """Upper-case text."""
    await asyncio.sleep(0)
    return text.upper()


def test_schema_and_description_come_from_the_function() -> None:
    assert add.name == "add"
    assert add.description == "Add two integers."
    schema = add.definition.parameters
    assert schema["required"] == ["a"]
    assert schema["properties"]["a"]["type"] == "integer"
    assert schema["additionalProperties"] is False
    assert upper.name == "slow_upper"


async def test_runs_sync_and_async_functions() -> None:
    assert await add.run('{"a": 2}') == "3"
    assert await upper.run('{"text": "hi"}') == "HI"


async def test_invalid_arguments_name_the_field() -> None:
    with pytest.raises(
        ToolError, match=r"invalid arguments for add: a: Input should be a valid integer"
    ):
        await add.run('{"a": "two"}')
    with pytest.raises(ToolError, match="c: Extra inputs are not permitted"):
        await add.run('{"a": 1, "c": 3}')
    with pytest.raises(ToolError, match="not valid JSON"):
        await add.run("{a")


async def test_failures_are_retried_then_reported() -> None:
    attempts: list[int] = []

    @tool(retries=2)
    def flaky() -> str:
        """Fails twice."""
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("try again")
        return "ok"

    assert await flaky.run("{}") == "ok"
    assert len(attempts) == 3

    @tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    with pytest.raises(ToolError, match="broken failed: disk on fire"):
        await broken.run("{}")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("17 + 25", "42"),
        ("12*12", "144"),
        ("(1+2)**3", "27"),
        ("7/2", "3.5"),
        ("2^10", "1024"),
        ("sqrt(16) + abs(-1)", "5"),
        ("-3 % 2", "1"),
    ],
)
async def test_calculator(expression: str, expected: str) -> None:
    assert await calculator.run(f'{{"expression": "{expression}"}}') == expected


@pytest.mark.parametrize(
    "expression",
    ["__import__('os').system('true')", "open('x')", "a + 1", "9**9**9", "1/0", "(1).real"],
)
async def test_calculator_refuses_anything_but_arithmetic(expression: str) -> None:
    with pytest.raises(ToolError):
        await calculator.run(f'{{"expression": "{expression}"}}')


async def test_current_time_in_a_zone() -> None:
    text = await current_time.run('{"timezone": "Asia/Tokyo"}')
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+09:00", text)
    with pytest.raises(ToolError, match="unknown time zone 'Mars/Base'"):
        await current_time.run('{"timezone": "Mars/Base"}')
