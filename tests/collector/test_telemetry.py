"""OpenTelemetry: request spans and counters, a minimal Resource, no contents anywhere."""

from __future__ import annotations

import gzip
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import httpx
import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, NumberDataPoint
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from collector.settings import CollectorSettings
from collector.telemetry import SERVICE_NAME, Telemetry, build_resource
from tests._servers import HANG_S, running_collector, serving_stub
from tests.collector.conftest import batch_body, make_signal

JSON = {"content-type": "application/json"}


def _metrics(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, object], float]]]:
    out: dict[str, list[tuple[dict[str, object], float]]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for rm in data.resource_metrics:
        assert dict(rm.resource.attributes) == dict(build_resource().attributes)
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for point in metric.data.data_points:
                    value = point.value if isinstance(point, NumberDataPoint) else point.sum
                    out.setdefault(metric.name, []).append((dict(point.attributes or {}), value))
    return out


def test_spans_and_counters(settings: CollectorSettings) -> None:
    spans = InMemorySpanExporter()
    reader = InMemoryMetricReader()
    a = make_signal()
    with (
        running_collector(settings, span_exporter=spans, metric_reader=reader) as url,
        httpx.Client(base_url=url, timeout=HANG_S) as http,
    ):
        assert (
            http.post(
                "/v1/signals", content=batch_body([a, make_signal()]), headers=JSON
            ).status_code
            == 200
        )
        assert (
            http.post(
                "/v1/signals",
                content=gzip.compress(batch_body([a])),
                headers={**JSON, "content-encoding": "gzip"},
            ).status_code
            == 200
        )
        assert http.post("/v1/signals", content=b"{", headers=JSON).status_code == 400
        assert http.get("/no/such/path").status_code == 404
        metrics = _metrics(reader)
    assert metrics["lmcp.collector.signals.accepted"] == [({}, 2)]
    assert metrics["lmcp.collector.signals.duplicate"] == [({}, 1)]
    assert metrics["lmcp.collector.requests.rejected"] == [({"code": "malformed_json"}, 1)]
    assert sum(v for _, v in metrics["lmcp.collector.flush.rows"]) == 3
    finished = spans.get_finished_spans()
    names = [s.name for s in finished]
    # No per-request span on ingestion (its start time would date a stored row): aggregates only.
    assert not any("/v1/signals" in n for n in names)
    assert "GET unmatched" in names
    for span in finished:
        assert dict(span.resource.attributes) == {
            "service.name": SERVICE_NAME,
            "service.version": build_resource().attributes["service.version"],
        }
        assert set(span.attributes or {}) <= {
            "http.request.method",
            "http.route",
            "http.response.status_code",
        }


def test_resource_ignores_otel_resource_attributes(
    monkeypatch: pytest.MonkeyPatch, settings: CollectorSettings
) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "host.name=leaky-host,user.name=someone")
    monkeypatch.setenv("OTEL_EXPERIMENTAL_RESOURCE_DETECTORS", "process,host,os")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "not-ours")
    spans = InMemorySpanExporter()
    telemetry = Telemetry.from_settings(settings, span_exporter=spans)
    with telemetry.tracer.start_as_current_span("probe"):
        pass
    telemetry.shutdown()
    (span,) = spans.get_finished_spans()
    assert set(span.resource.attributes) == {"service.name", "service.version"}
    assert span.resource.attributes["service.name"] == SERVICE_NAME


class _OtlpSink(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, bytes]]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("content-length", "0"))
        type(self).received.append((self.path, self.rfile.read(length)))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return None


def test_otlp_export_carries_only_the_minimal_resource(
    monkeypatch: pytest.MonkeyPatch, settings: CollectorSettings
) -> None:
    """A real OTLP/HTTP exchange with a loopback sink: what leaves names no host or process."""
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "host.name=leaky-host-canary")
    _OtlpSink.received = []
    with serving_stub(_OtlpSink) as sink:
        configured = settings.model_copy(update={"otel_exporter": "otlp", "otel_endpoint": sink})
        with (
            running_collector(configured) as url,
            httpx.Client(base_url=url, timeout=HANG_S) as http,
        ):
            http.post("/v1/signals", content=batch_body([make_signal()]), headers=JSON)
            http.get("/healthz")  # ingestion has no span; this route has one
        # Shutdown flushed spans and metrics to the sink.
    paths = {p for p, _ in _OtlpSink.received}
    assert paths == {"/v1/traces", "/v1/metrics"}
    for _, body in _OtlpSink.received:
        assert b"lmcp-collector" in body
        assert b"leaky-host-canary" not in body
        assert b"service.instance.id" not in body
        assert b"127.0.0.1" not in body


def test_console_export(
    monkeypatch: pytest.MonkeyPatch, settings: CollectorSettings, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "host.name=leaky-host-canary")
    telemetry = Telemetry.from_settings(settings.model_copy(update={"otel_exporter": "console"}))
    with telemetry.tracer.start_as_current_span("probe"):
        pass
    telemetry.accepted.add(1)
    telemetry.shutdown()
    out = capsys.readouterr().out
    assert '"service.name": "lmcp-collector"' in out
    assert "leaky-host-canary" not in out and "service.instance.id" not in out


def test_default_is_no_exporter(settings: CollectorSettings) -> None:
    telemetry = Telemetry.from_settings(settings)
    assert telemetry._shutdowns == []
    assert telemetry.tracing is False  # no span middleware at all
    assert not hasattr(telemetry.tracer, "resource")
