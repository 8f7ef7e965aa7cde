import asyncio
import re
from typing import Any

import pytest
from pydantic import BaseModel

from agenthost.agents import ToolError, tool
from agenthost.agents.tools import ToolOptions, calculator, current_time, think

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


class Point(BaseModel):
    x: float
    y: float


@tool
def describe(
    title: str, point: Point, tags: list[str] | None = None, limit: int = 3, **extra: Any
) -> dict[str, Any]:
    """Describe a point.

    Not part of the description.
    """
    return {"title": title, "sum": point.x + point.y, "tags": tags, "limit": limit, **extra}


def test_schema_honours_defaults_optional_fields_and_kwargs() -> None:
    schema = describe.definition.parameters
    assert describe.description == "Describe a point."
    assert schema["required"] == ["title", "point"]
    assert schema["properties"]["limit"] == {"default": 3, "title": "Limit", "type": "integer"}
    assert schema["properties"]["tags"]["default"] is None
    assert schema["additionalProperties"] is True  # **extra: other fields are allowed


async def test_non_text_results_are_json_and_extra_fields_pass_through() -> None:
    text = await describe.run('{"title": "p", "point": {"x": 1, "y": 2}, "colour": "red"}')
    assert text == '{"title":"p","sum":3.0,"tags":null,"limit":3,"colour":"red"}'


def test_a_function_without_docstring_is_refused_at_definition() -> None:
    def undocumented(x: int) -> int:
        return x

    with pytest.raises(TypeError, match="tool undocumented: the function has no docstring"):
        tool(undocumented)
    assert tool(description="Explained here.")(undocumented).description == "Explained here."

    def varargs(*values: int) -> int:
        """Sum."""
        return sum(values)

    with pytest.raises(TypeError, match=r"\*args cannot be described"):
        tool(varargs)


async def test_think_has_no_effect_but_an_acknowledgement() -> None:
    assert await think.run('{"thought": "first check the date"}') == "Noted."
    assert think.definition.parameters["required"] == ["thought"]


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

    @tool(options=ToolOptions(retries=2, backoff=0))
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
    with pytest.raises(ToolError, match="must be a JSON object"):
        await broken.run("[1]")


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


@pytest.mark.parametrize("timezone", ["America", "Europe/", "../../etc/passwd", "", "UTC\\u0000"])
async def test_current_time_refuses_a_bad_zone_without_telling_the_servers_paths(
    timezone: str,
) -> None:
    # "America" is a folder of the zone database: it was "[Errno 21] Is a
    # directory: '…/site-packages/tzdata/zoneinfo/America'".
    with pytest.raises(ToolError) as refused:
        await current_time.run(f'{{"timezone": "{timezone}"}}')
    assert str(refused.value).startswith("unknown time zone"), str(refused.value)
    assert "/site-packages" not in str(refused.value) and "Errno" not in str(refused.value)


@pytest.mark.parametrize("expression", ["(-1)**0.5", "(-8)**(1/3)", "1 + (-2)**-0.5"])
async def test_calculator_refuses_results_that_are_not_real(expression: str) -> None:
    with pytest.raises(ToolError, match="the result is not a real number"):
        await calculator.run(f'{{"expression": "{expression}"}}')
