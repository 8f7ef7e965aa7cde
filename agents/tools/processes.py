"""CPU-bound sync tools in worker processes: :class:`ProcessPool` and :data:`TOOL_PROCESSES`.

A sync tool runs in a thread (:mod:`agents.tools.threads`), which keeps the
event loop free of its waiting but not of its computing: a thread holds the
interpreter's lock while it computes, so a CPU-bound tool delays every
request. A tool made with ``process=True`` (``process: true`` in the config)
runs in a worker process instead, in one pool shared by every such tool:

- ``spawn`` workers (never a ``fork`` of the server with its threads and
  sockets); the function travels by reference, so it must be a module-level
  function its worker can import (:class:`FunctionReference`), and its
  arguments and result must pickle;
- bounded: at most :data:`MAX_TOOL_PROCESSES` calls at once (more wait, and
  waiting counts in the tool's time-out); a call that times out goes on in
  its worker, which is busy until it ends;
- made by the first call, and ended with the server (:meth:`ProcessPool.shutdown`
  stops the workers, a hung one included, so that they cannot hold the exit).
"""

from __future__ import annotations

import asyncio
import importlib
import multiprocessing
import os
import pickle
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenthost.agents.errors import ToolError
from agenthost.agents.tools.threads import ThreadLimit

MAX_TOOL_PROCESSES = max(1, min(4, os.cpu_count() or 1))
"""Worker processes of the tools that run in one (and their calls at once)."""


@dataclass(frozen=True)
class FunctionReference:
    """A module-level function as a worker finds it: module, name, and where the module is."""

    module: str
    qualname: str
    root: str | None
    """The folder the module was imported from (a module next to the config file is
    found there, not on ``sys.path``); None if it is on the worker's path anyway."""

    @classmethod
    def of(cls, function: Any, name: str) -> FunctionReference:
        """``function``'s reference; TypeError naming the tool if a worker could not import it."""
        module, qualname = getattr(function, "__module__", None), function.__qualname__
        if module is None or module == "__main__" or "<locals>" in qualname:
            raise TypeError(
                f"tool {name}: process: true needs a module-level function its worker "
                f"process can import (package.module:function); {module}.{qualname} "
                "cannot be pickled to one"
            )
        try:
            pickle.dumps(function)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            raise TypeError(
                f"tool {name}: process: true needs a function that can be pickled to its "
                f"worker process (a module-level function): {exc}"
            ) from exc
        return cls(module, qualname, _root_of(sys.modules[module]))

    def load(self) -> Any:
        if self.root is not None and self.root not in sys.path:
            sys.path.append(self.root)
        obj: Any = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            obj = getattr(obj, part)
        return obj


def _root_of(module: Any) -> str | None:
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    path = Path(file).resolve()
    depth = module.__name__.count(".") + (path.name == "__init__.py")
    return str(path.parents[depth])


def _call(reference: FunctionReference, arguments: dict[str, Any]) -> Any:
    """In the worker: the function called with ``arguments``."""
    return reference.load()(**arguments)


class ProcessPool:
    """A bounded, lazily made pool of ``spawn`` worker processes."""

    def __init__(self, workers: int = MAX_TOOL_PROCESSES) -> None:
        self.workers = workers
        self.places = ThreadLimit(workers)
        """Calls submitted and not ended (their worker busy), timed-out ones included."""
        self._executor: ProcessPoolExecutor | None = None

    @property
    def started(self) -> bool:
        return self._executor is not None

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(self.workers, mp_context=context)
        return self._executor

    async def call(self, reference: FunctionReference, arguments: dict[str, Any], name: str) -> Any:
        """``reference(**arguments)`` in a worker; cancelling the wait leaves it running there."""
        await self.places.take()
        try:
            future = self._pool().submit(_call, reference, arguments)
        except BaseException:
            self.places.release()
            raise
        future.add_done_callback(lambda _: self.places.release())
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool as exc:
            self.shutdown()  # the next call starts a new pool
            raise ToolError(f"{name}: its worker process died") from exc
        except pickle.PicklingError as exc:
            raise ToolError(f"{name}: arguments or result cannot be pickled: {exc}") from exc

    def shutdown(self) -> None:
        """Stop the workers now (running calls too); a later call starts a new pool."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        # The pool's own shutdown waits for running calls; a hung one would hold the
        # server's exit. Its processes are private (Python 3.14 adds terminate_workers).
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()


TOOL_PROCESSES = ProcessPool()
"""The pool every ``process=True`` tool runs in; the app shuts it down at exit."""
