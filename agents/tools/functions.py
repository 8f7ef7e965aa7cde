"""Tools from typed, documented Python functions: :class:`Tool` and ``@tool``.

The name comes from the function, the description from its docstring (a
function without one is refused when the tool is defined), the input schema
from the signature: annotations, defaults and ``**kwargs`` (extra fields
allowed and passed through). Sync functions run in a worker thread, never
on the event loop, with a time-out (``ToolOptions.timeout``, else
:data:`SYNC_TIMEOUT`): the thread is a daemon, so a call that never ends is
abandoned on time-out and cannot hold the process at exit (SIGTERM). Each
tool runs at most ``max_threads`` at once (:data:`~agents.tools.threads.MAX_THREADS_PER_TOOL`),
abandoned ones included, under a ceiling shared by every user tool
(:mod:`agents.tools.threads`): one tool's hung calls make only that tool wait.
A CPU-bound sync function can run in a worker process instead (``process=True``,
:mod:`agents.tools.processes`): a thread would hold the interpreter while it computes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, get_type_hints, overload

import anyio
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from agenthost.agents.errors import ToolError
from agenthost.agents.tools.base import BaseTool, ToolOptions
from agenthost.agents.tools.processes import TOOL_PROCESSES, FunctionReference
from agenthost.agents.tools.threads import MAX_THREADS_PER_TOOL, USER_THREADS, ThreadLimit

if TYPE_CHECKING:
    from agenthost.agents.tools.events import ToolHooks

ToolFunction = Callable[..., Any]

SYNC_TIMEOUT = 60.0
"""Seconds a sync tool may run when its options set no time-out."""


class Tool(BaseTool):
    """A Python function (sync or async) the agent's model can call."""

    def __init__(
        self,
        function: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        retries: int = 0,
        options: ToolOptions | None = None,
        hooks: Sequence[ToolHooks] = (),
        max_threads: int = MAX_THREADS_PER_TOOL,
        ceiling: ThreadLimit = USER_THREADS,
        process: bool = False,
    ) -> None:
        """``max_threads``: calls of a sync function running at once (copies made by
        :meth:`with_options` share them); ``ceiling``: the bound shared with other tools;
        ``process``: run the (sync, module-level) function in a worker process instead
        (:mod:`agents.tools.processes`), TypeError if it cannot be."""
        name = name or function.__name__
        description = description or _summary(function)
        if not description:
            raise TypeError(
                f"tool {name}: the function has no docstring; "
                "document what it does, the model reads it"
            )
        options = options or ToolOptions(retries=retries)
        super().__init__(name, description, options=options, hooks=hooks)
        self.function = function
        self.input_model = _input_model(function, name)
        self._schema = self.input_model.model_json_schema()
        self._is_async = inspect.iscoroutinefunction(function)
        self.threads = ThreadLimit(max_threads, ceiling)
        self.process: FunctionReference | None = None
        """Where a worker process finds the function (None: it runs in a thread)."""
        if process:
            if self._is_async:
                raise TypeError(f"tool {name}: process: true is for sync functions")
            self.process = FunctionReference.of(function, name)

    @property
    def parameters(self) -> dict[str, Any]:
        return self._schema

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            model = self.input_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolError(f"invalid arguments for {self.name}: {problems}") from exc
        values = {name: getattr(model, name) for name in type(model).model_fields}
        return values | (model.model_extra or {})

    async def invoke(self, arguments: dict[str, Any]) -> Any:
        if self._is_async:
            return await self.function(**arguments)
        # A sync function cannot be interrupted; on time-out the caller stops
        # waiting and the thread finishes in the background.
        # Waiting for one of the tool's threads counts in its time-out.
        timeout = self.options.timeout or SYNC_TIMEOUT
        with anyio.move_on_after(timeout) as deadline:
            if self.process is not None:
                return await TOOL_PROCESSES.call(self.process, arguments, self.name)
            return await in_daemon_thread(
                lambda: self.function(**arguments), self.name, self.threads
            )
        if deadline.cancelled_caught:
            raise ToolError(f"{self.name} timed out after {timeout:g} s")
        raise AssertionError("unreachable")  # pragma: no cover


async def in_daemon_thread(
    function: Callable[[], Any], name: str, threads: ThreadLimit = USER_THREADS
) -> Any:
    """``function()`` in a new daemon thread holding a place in ``threads`` until it
    ends; cancelling the wait (for the place or the result) abandons the thread."""
    await threads.take()
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def run() -> None:
        result, error = None, None
        try:
            result = context.run(function)
        except BaseException as exc:  # handed to the awaiting task
            error = exc
        finally:
            threads.release()
        with contextlib.suppress(RuntimeError):  # the loop closed while the tool ran
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=f"tool {name}", daemon=True).start()
    return await future


@overload
def tool(function: ToolFunction, /) -> Tool: ...
@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    retries: int = 0,
    options: ToolOptions | None = None,
    max_threads: int = MAX_THREADS_PER_TOOL,
    ceiling: ThreadLimit = USER_THREADS,
    process: bool = False,
) -> Callable[[ToolFunction], Tool]: ...
def tool(
    function: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    retries: int = 0,
    options: ToolOptions | None = None,
    max_threads: int = MAX_THREADS_PER_TOOL,
    ceiling: ThreadLimit = USER_THREADS,
    process: bool = False,
) -> Tool | Callable[[ToolFunction], Tool]:
    """Turn a typed, documented function into a :class:`Tool`.

    The parameters' annotations and defaults become the input schema; the
    docstring's first paragraph becomes the description; ``max_threads`` and
    ``ceiling`` bound a sync function's threads, ``process`` runs it in a worker
    process instead (:class:`Tool`).
    """

    def wrap(fn: ToolFunction) -> Tool:
        return Tool(
            fn,
            name=name,
            description=description,
            retries=retries,
            options=options,
            max_threads=max_threads,
            ceiling=ceiling,
            process=process,
        )

    return wrap(function) if function is not None else wrap


def _summary(function: ToolFunction) -> str:
    doc = inspect.getdoc(function) or ""
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


def _input_model(function: ToolFunction, name: str) -> type[BaseModel]:
    hints = get_type_hints(function)
    fields: dict[str, Any] = {}
    extra = "forbid"
    for param in inspect.signature(function).parameters.values():
        if param.kind == param.VAR_POSITIONAL:
            raise TypeError(f"tool {name}: *args cannot be described to a model")
        if param.kind == param.VAR_KEYWORD:
            extra = "allow"
            continue
        if param.kind == param.POSITIONAL_ONLY:
            raise TypeError(f"tool {name}: positional-only parameters cannot be named by a model")
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    config = ConfigDict(extra=extra)  # type: ignore[typeddict-item]
    return create_model(f"{name}_arguments", __config__=config, **fields)
