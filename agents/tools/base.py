"""Tools: a name, a description, a pydantic input schema and one run pipeline.

Every call goes through the same steps: validate the JSON arguments against
the input model, run the function (sync functions in a worker thread),
retry a failure up to ``retries`` times, and turn any failure into a
:class:`~agents.errors.ToolError` whose message the model can read.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_type_hints, overload

import anyio.to_thread
import orjson
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from agents.errors import ToolError

ToolFunction = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """What a chat model is told about a tool."""

    name: str
    description: str
    parameters: dict[str, Any]


class Tool:
    """A callable the agent's model can ask for."""

    def __init__(
        self,
        function: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        retries: int = 0,
    ) -> None:
        self.function = function
        self.name = name or function.__name__
        self.description = description or _summary(function)
        self.retries = retries
        self.input_model = _input_model(function, self.name)
        self._is_async = inspect.iscoroutinefunction(function)
        self.definition = ToolDefinition(
            name=self.name,
            description=self.description,
            parameters=self.input_model.model_json_schema(),
        )

    def validate(self, arguments: str) -> dict[str, Any]:
        """Parse and validate JSON arguments; the error names each bad field."""
        try:
            raw = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            raise ToolError(f"arguments of {self.name} are not valid JSON: {exc}") from exc
        try:
            model = self.input_model.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolError(f"invalid arguments for {self.name}: {problems}") from exc
        return {name: getattr(model, name) for name in type(model).model_fields}

    async def run(self, arguments: str) -> str:
        """Validate, run (with retries) and return the result as text."""
        kwargs = self.validate(arguments)
        attempt = 0
        while True:
            try:
                return _to_text(await self._call(kwargs))
            except ToolError:
                raise
            except Exception as exc:
                if attempt >= self.retries:
                    raise ToolError(f"{self.name} failed: {exc}") from exc
                attempt += 1

    async def _call(self, kwargs: dict[str, Any]) -> Any:
        if self._is_async:
            return await self.function(**kwargs)
        return await anyio.to_thread.run_sync(lambda: self.function(**kwargs))

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


@overload
def tool(function: ToolFunction, /) -> Tool: ...
@overload
def tool(
    *, name: str | None = None, description: str | None = None, retries: int = 0
) -> Callable[[ToolFunction], Tool]: ...
def tool(
    function: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    retries: int = 0,
) -> Tool | Callable[[ToolFunction], Tool]:
    """Turn a typed, documented function into a :class:`Tool`.

    The parameters' annotations and defaults become the input schema; the
    docstring's first paragraph becomes the description.
    """

    def wrap(fn: ToolFunction) -> Tool:
        return Tool(fn, name=name, description=description, retries=retries)

    return wrap(function) if function is not None else wrap


def _summary(function: ToolFunction) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


def _input_model(function: ToolFunction, name: str) -> type[BaseModel]:
    hints = get_type_hints(function)
    fields: dict[str, Any] = {}
    for param in inspect.signature(function).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *args and **kwargs cannot be described to a model")
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    config = ConfigDict(extra="forbid")
    return create_model(f"{name}_arguments", __config__=config, **fields)


def _to_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return orjson.dumps(value, default=str).decode()
