"""OpenTelemetry for the collector itself: request spans and ingestion counters.

The Resource is explicit and minimal -- ``service.name`` and ``service.version`` only. The SDK's
``Resource.create()`` would add a per-process ``service.instance.id`` and everything in
``OTEL_RESOURCE_ATTRIBUTES``; we never call it. No global provider is set: the providers belong
to one app and are shut down with it.

No span or metric attribute carries a signal's contents, an address, a user agent, a path with
values in it, or a query string: spans name the method and the ROUTE TEMPLATE; the rejected
counter carries the stable error code.

The ingestion route has NO per-request span: a span's microsecond start time could be paired
with the row the request stored, giving a "day-only" signal an arrival time. Ingestion is
observed through aggregate counters and histograms only (accepted, duplicates, rejected, rows
per flush).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from collector.settings import CollectorSettings
from service.serving import service_version

__all__ = [
    "SERVICE_NAME",
    "UNTRACED_PATHS",
    "RequestSpanMiddleware",
    "Telemetry",
    "build_resource",
]

SERVICE_NAME = "lmcp-collector"


def build_resource() -> Resource:
    """The only Resource the collector exports: name and version, nothing about the host."""
    return Resource({"service.name": SERVICE_NAME, "service.version": service_version()})


@dataclass
class Telemetry:
    """The app's tracer, meter and instruments, plus the providers it must shut down."""

    tracer: trace.Tracer
    meter: metrics.Meter
    _shutdowns: list[Callable[[], object]] = field(default_factory=list)
    #: False when spans go nowhere (exporter ``none``): the request middleware is skipped.
    tracing: bool = True

    def __post_init__(self) -> None:
        m = self.meter
        self.accepted = m.create_counter(
            "lmcp.collector.signals.accepted", unit="{signal}", description="Signals stored."
        )
        self.duplicates = m.create_counter(
            "lmcp.collector.signals.duplicate",
            unit="{signal}",
            description="Signals whose id was already stored (retries).",
        )
        self.rejected = m.create_counter(
            "lmcp.collector.requests.rejected",
            unit="{request}",
            description="Ingestion requests refused, by stable error code.",
        )
        self.flush_rows = m.create_histogram(
            "lmcp.collector.flush.rows", unit="{row}", description="Rows written per flush."
        )
        self.refused_bodies = m.create_counter(
            "lmcp.collector.flush.refused_bodies",
            unit="{flush}",
            description="Large flushes written from their validated models because DuckDB "
            "refused their bodies (a stored or repeated id, a repeated key, another spelling).",
        )
        self.flush_failures = m.create_counter(
            "lmcp.collector.flush.failures", unit="{flush}", description="Flushes that failed."
        )
        self.purged = m.create_counter(
            "lmcp.collector.retention.deleted",
            unit="{signal}",
            description="Signals deleted by retention.",
        )

    @classmethod
    def from_settings(
        cls,
        settings: CollectorSettings,
        *,
        span_exporter: SpanExporter | None = None,
        metric_reader: MetricReader | None = None,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> Telemetry:
        """Providers per settings; tests inject exporters (or whole providers) instead."""
        shutdowns: list[Callable[[], object]] = []
        resource = build_resource()
        tracing = True
        if tracer_provider is None:
            if span_exporter is not None:
                sdk_tp = TracerProvider(resource=resource)
                sdk_tp.add_span_processor(SimpleSpanProcessor(span_exporter))
            elif settings.otel_exporter == "none":
                sdk_tp = None
            else:
                sdk_tp = TracerProvider(resource=resource)
                sdk_tp.add_span_processor(BatchSpanProcessor(_span_exporter(settings)))
            if sdk_tp is None:
                tracer_provider = trace.NoOpTracerProvider()
                tracing = False
            else:
                tracer_provider = sdk_tp
                shutdowns.append(sdk_tp.shutdown)
        if meter_provider is None:
            readers: list[MetricReader] = []
            if metric_reader is not None:
                readers.append(metric_reader)
            elif settings.otel_exporter != "none":
                readers.append(
                    PeriodicExportingMetricReader(
                        _metric_exporter(settings),
                        export_interval_millis=settings.otel_metric_interval_s * 1000,
                    )
                )
            if readers:
                sdk_mp = MeterProvider(resource=resource, metric_readers=readers)
                meter_provider = sdk_mp
                shutdowns.append(sdk_mp.shutdown)
            else:
                meter_provider = metrics.NoOpMeterProvider()
        return cls(
            tracer=tracer_provider.get_tracer("collector", service_version()),
            meter=meter_provider.get_meter("collector", service_version()),
            _shutdowns=shutdowns,
            tracing=tracing,
        )

    def shutdown(self) -> None:
        for fn in self._shutdowns:
            fn()
        self._shutdowns.clear()


def _span_exporter(settings: CollectorSettings) -> SpanExporter:
    if settings.otel_exporter == "console":
        return ConsoleSpanExporter(out=sys.stdout)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    endpoint = settings.otel_endpoint
    return OTLPSpanExporter(endpoint=None if endpoint is None else endpoint + "/v1/traces")


def _metric_exporter(settings: CollectorSettings) -> MetricExporter:
    if settings.otel_exporter == "console":
        return ConsoleMetricExporter(out=sys.stdout)
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    endpoint = settings.otel_endpoint
    return OTLPMetricExporter(endpoint=None if endpoint is None else endpoint + "/v1/metrics")


#: Routes without per-request spans (ingestion: its spans would time each stored signal).
UNTRACED_PATHS = frozenset({"/v1/signals"})


class RequestSpanMiddleware:
    """One server span per HTTP request: method, route template, status. Nothing else.
    Requests to ``UNTRACED_PATHS`` get no span at all."""

    def __init__(self, app: ASGIApp, tracer: trace.Tracer) -> None:
        self.app = app
        self.tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in UNTRACED_PATHS:
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method", ""))
        with self.tracer.start_as_current_span(
            method,
            kind=trace.SpanKind.SERVER,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            status = 500

            async def send_status(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                await send(message)

            try:
                await self.app(scope, receive, send_status)
            finally:
                route = scope.get("route")
                template = getattr(route, "path", None) or "unmatched"
                span.update_name(f"{method} {template}")
                span.set_attribute("http.request.method", method)
                span.set_attribute("http.route", template)
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(trace.StatusCode.ERROR)
