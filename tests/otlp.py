"""An in-test OTLP/HTTP trace receiver: each export's protobuf decoded into :class:`Span`."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.upstream import serve_in_thread

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@dataclass
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    failed: bool


def _value(value: AnyValue) -> Any:
    field = value.WhichOneof("value")
    if field == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, field) if field else None


class Receiver:
    """An OTLP/HTTP trace receiver: decodes each export's protobuf into :class:`Span`."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.services: set[str] = set()
        self.app = Starlette(routes=[Route("/v1/traces", self.export, methods=["POST"])])

    async def export(self, request: Request) -> Response:
        body = await request.body()
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        self.add(ExportTraceServiceRequest.FromString(body))
        return Response(b"", media_type="application/x-protobuf")

    def add(self, export: ExportTraceServiceRequest) -> None:
        for resource in export.resource_spans:
            for attribute in resource.resource.attributes:
                if attribute.key == "service.name":
                    self.services.add(_value(attribute.value))
            for scope in resource.scope_spans:
                for span in scope.spans:
                    self.spans.append(
                        Span(
                            span.name,
                            span.trace_id.hex(),
                            span.span_id.hex(),
                            span.parent_span_id.hex(),
                            span.kind,
                            {a.key: _value(a.value) for a in span.attributes},
                            span.status.code == 2,
                        )
                    )

    def named(self, name: str) -> list[Span]:
        return [span for span in self.spans if span.name == name]


def receiving(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """A receiver, and the OTEL_* variables making the apps made inside export to it
    (a fixture's body: ``yield from receiving(monkeypatch)``)."""
    receiver = Receiver()
    with serve_in_thread(receiver.app) as url:
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "agenthost-test")
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        yield receiver


class _TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, receiver: Receiver) -> None:
        self.receiver = receiver

    def Export(
        self, request: ExportTraceServiceRequest, context: grpc.ServicerContext
    ) -> ExportTraceServiceResponse:
        self.receiver.add(request)
        return ExportTraceServiceResponse()


def receiving_grpc(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    """As :func:`receiving`, the exports coming over OTLP/gRPC (opentelemetry-proto's
    collector service on a real port)."""
    receiver = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    service = _TraceService(receiver)
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(service, server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "agenthost-grpc")
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        yield receiver
    finally:
        server.stop(None)
