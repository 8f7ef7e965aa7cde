"""OpenTelemetry traces with the GenAI semantic conventions, off unless asked for.

On when ``OTEL_TRACES_EXPORTER`` names ``otlp`` (or ``console``) and
``OTEL_SDK_DISABLED`` is not true; then the standard variables apply:
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``),
``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf``; ``grpc`` needs
``opentelemetry-exporter-otlp-proto-grpc``), ``OTEL_SERVICE_NAME``
(default ``agenthost``), ``OTEL_TRACES_SAMPLER``/``_ARG``, ``OTEL_BSP_*``.
Off, the OpenTelemetry SDK is not imported and nothing of ours calls OTel
(FastAPI >= 0.165 imports the API itself; its telemetry is turned off).

Spans: one ``SERVER`` span per HTTP request but probes (its parent from the request's
W3C ``traceparent``); ``invoke_agent {agent}`` per run, current while the
run works, so handoffs, pipeline steps and ``execute_tool {tool}`` spans
nest in it; ``chat {model}`` per upstream model call, whose context goes
upstream as ``traceparent``. Message contents are recorded only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``.

Each host has a tracer provider of its own (not the global one), shut down
(its spans flushed) when the host stops.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agenthost.adapters.sse import passes_bodies
from agenthost.agents import RunResult
from agenthost.agents.models.base import ModelResponse
from agenthost.agents.observe import (
    AgentObserver,
    ModelCallProbe,
    RunProbe,
    UpstreamObserver,
    current_tracing,
)
from agenthost.agents.tools import ToolEvent, ToolHooks
from agenthost.app.metrics import outcome_of

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.propagate import inject
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SpanExporter,
    )
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError('tracing needs the otel extra: pip install "agenthost[otel]"') from exc


_W3C = TraceContextTextMapPropagator()
_ROOT = otel_context.Context()
_TRACE_HEADERS = (b"traceparent", b"tracestate")
# Liveness and readiness probes: one every few seconds per replica would be most
# of the spans, and none of them tells anything the probe's own answer does not.
UNTRACED_PATHS = frozenset(("/healthz", "/readyz"))


def _exporters(environ: Mapping[str, str]) -> list[SpanExporter]:
    names = {e.strip() for e in environ.get("OTEL_TRACES_EXPORTER", "").split(",")}
    exporters: list[SpanExporter] = []
    if "otlp" in names:
        protocol = environ.get(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        )
        if protocol == "grpc":
            try:
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                    OTLPSpanExporter as GRPCExporter,
                )
            except ImportError as exc:
                raise ImportError(
                    "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs opentelemetry-exporter-otlp-proto-grpc"
                ) from exc
            exporters.append(GRPCExporter())
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporters.append(OTLPSpanExporter())
    if "console" in names:
        exporters.append(ConsoleSpanExporter())
    return exporters


class Tracing:
    """The tracer of one host, and the observer (:meth:`observer`) its agents are built
    with: spans of runs, tool calls and model calls."""

    def __init__(self, environ: Mapping[str, str] = os.environ) -> None:
        service = environ.get("OTEL_SERVICE_NAME") or "agenthost"
        resource = Resource.create({"service.name": service})
        self.provider = TracerProvider(resource=_Resource(resource.attributes, resource.schema_url))
        for exporter in _exporters(environ):
            self.provider.add_span_processor(BatchSpanProcessor(exporter))
        self.tracer = self.provider.get_tracer("agenthost")
        capture = environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
        self.capture_content = capture.strip().lower() == "true"

    def shutdown(self) -> None:
        """Flush the spans not yet exported, and stop."""
        self.provider.shutdown()

    # TraceHooks (agents.observe): gRPC calls, MCP _meta, calls going out
    @contextmanager
    def server_call(
        self, name: str, carrier: Mapping[str, Any], attributes: Mapping[str, Any]
    ) -> Iterator[None]:
        # Only well-formed W3C values: an MCP _meta is whatever the client sent.
        w3c = {k: v for k in ("traceparent", "tracestate") if isinstance(v := carrier.get(k), str)}
        parent = _W3C.extract(w3c, otel_context.get_current()) if w3c else None
        span = self.tracer.start_span(
            name, context=parent, kind=SpanKind.SERVER, attributes=attributes
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield
        except BaseException as exc:
            _failed(span, exc)
            raise
        finally:
            otel_context.detach(token)
            span.end()

    def outgoing(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        _W3C.inject(headers)
        return headers

    def observer(self, inner: AgentObserver | None = None) -> AgentObserver:
        """What makes ``invoke_agent``, ``execute_tool`` and ``chat`` spans, telling
        ``inner`` (metrics) too: given to the agents when they are built."""
        return _Observer(self, inner)


class _Resource(Resource):
    """A resource hashed once: the OTLP encoder groups each span by its resource,
    and :class:`Resource` hashes a sorted JSON dump of its attributes every time."""

    def __hash__(self) -> int:
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = self.__dict__["_hash"] = super().__hash__()
        return cached

    def __eq__(self, other: object) -> bool:
        return self is other or super().__eq__(other)


class _Observer:
    """An :class:`~agenthost.agents.observe.AgentObserver`: spans, and ``inner``'s
    observers beside them."""

    def __init__(self, tracing: Tracing, inner: AgentObserver | None) -> None:
        self.tracing = tracing
        self.inner = inner

    def tool_hooks(self, agent: str) -> Sequence[ToolHooks]:
        inner = self.inner.tool_hooks(agent) if self.inner is not None else ()
        return (*inner, _ToolSpans(self.tracing, agent))

    def upstream_observer(self, agent: str) -> UpstreamObserver:
        inner = self.inner.upstream_observer(agent) if self.inner is not None else None
        return _Upstream(self.tracing, agent, inner)

    def run_started(self, agent: str, conversation: str | None = None) -> RunProbe:
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
        if conversation is not None:
            attributes["gen_ai.conversation.id"] = conversation
        span = self.tracing.tracer.start_span(
            f"invoke_agent {agent}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        inner = self.inner.run_started(agent, conversation) if self.inner is not None else None
        return _RunSpan(span, inner)


class _RunSpan:
    """A :class:`~agenthost.agents.observe.ScopedRunProbe`: the run's span is current
    while the run works."""

    __slots__ = ("context", "inner", "span")

    def __init__(self, span: Span, inner: RunProbe | None) -> None:
        self.span = span
        self.inner = inner
        self.context = trace.set_span_in_context(span)

    def attach(self) -> object:
        return otel_context.attach(self.context)

    def detach(self, token: object) -> None:
        otel_context.detach(token)  # type: ignore[arg-type]

    def first_text(self) -> None:
        if self.inner is not None:
            self.inner.first_text()

    def finished(self, result: RunResult | None, error: BaseException | None) -> None:
        if self.inner is not None:
            self.inner.finished(result, error)
        span = self.span
        if result is not None:
            span.set_attributes(
                {
                    "gen_ai.usage.input_tokens": result.usage.input_tokens,
                    "gen_ai.usage.output_tokens": result.usage.output_tokens,
                    "gen_ai.response.finish_reasons": [result.finish_reason],
                }
            )
        else:
            _failed(span, error)
        span.end()


def _failed(span: Span, error: BaseException | None) -> None:
    outcome = outcome_of(error)
    span.set_attribute("error.type", type(error).__name__ if error is not None else outcome)
    if outcome != "cancelled":
        span.set_status(Status(StatusCode.ERROR, str(error) if error is not None else None))


class _Upstream:
    """An upstream observer making ``chat`` spans; counts go to ``inner`` (metrics)."""

    def __init__(self, tracing: Tracing, agent: str, inner: UpstreamObserver | None) -> None:
        self.tracing = tracing
        self.agent = agent
        self.inner = inner

    def upstream_request(self, outcome: str) -> None:
        if self.inner is not None:
            self.inner.upstream_request(outcome)

    def model_call(self, model: str, params: dict[str, Any]) -> ModelCallProbe:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.agent.name": self.agent,
        }
        if self.tracing.capture_content:
            attributes["gen_ai.input.messages"] = orjson.dumps(params.get("messages")).decode()
        span = self.tracing.tracer.start_span(
            f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes
        )
        return _ChatSpan(span, self.tracing.capture_content)


class _ChatSpan:
    def __init__(self, span: Span, capture: bool) -> None:
        self.span = span
        self.capture = capture
        self.headers: dict[str, str] = {}
        inject(self.headers, context=trace.set_span_in_context(span))

    def finished(self, response: ModelResponse | None, error: BaseException | None) -> None:
        span = self.span
        if response is not None:
            span.set_attribute("gen_ai.usage.input_tokens", response.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", response.usage.output_tokens)
            # The runtime reads a turn asking for tools as "stop": the wire said tool_calls.
            reason = "tool_calls" if response.message.tool_calls else response.finish_reason
            span.set_attribute("gen_ai.response.finish_reasons", [reason])
            if self.capture:
                span.set_attribute("gen_ai.output.messages", response.message.text)
        else:
            _failed(span, error)
        span.end()


class _ToolSpans:
    """A tool hook making one ``execute_tool`` span per call (its attempts inside)."""

    def __init__(self, tracing: Tracing, agent: str) -> None:
        self.tracing = tracing
        self.agent = agent
        self.open: dict[tuple[str, str], Span] = {}

    async def on_tool_event(self, event: ToolEvent) -> None:
        key = (event.call_id, event.tool)
        if event.kind == "start" and key not in self.open:
            self.open[key] = self.tracing.tracer.start_span(
                f"execute_tool {event.tool}",
                kind=SpanKind.INTERNAL,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": event.tool,
                    "gen_ai.tool.call.id": event.call_id,
                    "gen_ai.agent.name": self.agent,
                },
            )
        elif event.kind == "finish":
            span = self.open.pop(key, None)
            if span is None:  # refused before any attempt: a span of no duration
                span = self.tracing.tracer.start_span(f"execute_tool {event.tool}")
            if event.error is not None:
                span.set_attribute("error.type", type(event.error).__name__)
                span.set_status(Status(StatusCode.ERROR, str(event.error)))
            span.end()


class ServerSpans:
    """Pure ASGI: one ``SERVER`` span per HTTP request (but the probes, :data:`UNTRACED_PATHS`),
    its parent from ``traceparent``.

    Cheap on purpose (it runs on every request): only the two W3C headers are
    read (no baggage, no dict of every header), the status is set once, and
    nothing else is recorded per response chunk.
    """

    def __init__(self, app: ASGIApp, tracing: Tracing) -> None:
        self.app = app
        self.tracing = tracing
        self.tracer = tracing.tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNTRACED_PATHS:
            await self.app(scope, receive, send)
            return
        carrier = {
            k.decode("latin-1"): v.decode("latin-1")
            for k, v in scope["headers"]
            if k in _TRACE_HEADERS
        }
        method, path = scope["method"], scope["path"]
        span = self.tracer.start_span(
            f"{method} {path}",
            context=_W3C.extract(carrier) if carrier else _ROOT,
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method, "url.path": path},
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        hooks = current_tracing.set(self.tracing)
        status = 0

        async def send_status(message: Message) -> None:
            nonlocal status
            if not status and message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        passes_bodies(scope, send_status, send)  # only the start is read
        try:
            await self.app(scope, receive, send_status)
        finally:
            current_tracing.reset(hooks)
            otel_context.detach(token)
            if status:
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(Status(StatusCode.ERROR))
            span.end()
