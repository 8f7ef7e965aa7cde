"""What one span costs in the OpenTelemetry SDK: the floor under tracing's overhead.

Side by side in one run, CPU per request-shaped pair of spans (a ``SERVER`` span
and an ``invoke_agent`` span inside it, with agenthost's attributes): made and
ended with no processor (``make``), handed to a ``BatchSpanProcessor`` whose
exporter drops them (``batch``), and encoded to OTLP protobuf as the OTLP
exporters do (``encode``; no network), the last also with agenthost's resource,
which hashes itself once (``encode-1hash``; the encoder hashes the resource of
every span). Otherwise agenthost's own code is not in the loop.

    .venv/bin/python bench/span_cost.py [--pairs N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from opentelemetry import context, trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from agenthost.app.tracing import _Resource


class _Exporter(SpanExporter):
    def __init__(self, encode: bool) -> None:
        self.encode = encode

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self.encode:
            encode_spans(spans).SerializePartialToString()
        return SpanExportResult.SUCCESS


def pairs(variant: str, count: int) -> float:
    """CPU seconds per pair of spans, the export included (flushed before the clock stops)."""
    resource = Resource.create({"service.name": "bench"})
    if variant == "encode-1hash":
        resource = _Resource(resource.attributes, resource.schema_url)
    provider = TracerProvider(resource=resource)
    if variant != "make":
        exporter = _Exporter(encode=variant.startswith("encode"))
        provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=count * 2))
    tracer = provider.get_tracer("agenthost")
    started = time.process_time()
    for _ in range(count):
        server = tracer.start_span(
            "POST /v1/chat/completions",
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": "POST", "url.path": "/v1/chat/completions"},
        )
        token = context.attach(trace.set_span_in_context(server))
        run = tracer.start_span(
            "invoke_agent echo",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "echo"},
        )
        run.set_attributes(
            {
                "gen_ai.usage.input_tokens": 17,
                "gen_ai.usage.output_tokens": 17,
                "gen_ai.response.finish_reasons": ["stop"],
            }
        )
        run.end()
        context.detach(token)
        server.set_attribute("http.response.status_code", 200)
        server.end()
    provider.force_flush()
    elapsed = time.process_time() - started
    provider.shutdown()
    return elapsed / count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    totals = {"make": 0.0, "batch": 0.0, "encode": 0.0, "encode-1hash": 0.0}
    for round_ in range(args.rounds):
        names = list(totals) if round_ % 2 == 0 else list(reversed(totals))
        for name in names:
            totals[name] += pairs(name, args.pairs)
    for name, total in totals.items():
        print(f"{name:<12} {total / args.rounds * 1e6:6.1f} µs CPU per request's two spans")
    return 0


if __name__ == "__main__":
    sys.exit(main())
