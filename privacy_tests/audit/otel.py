"""In-memory OpenTelemetry exporters, and what the audit reads out of them.

``OtelCapture`` holds an ``InMemorySpanExporter`` and an ``InMemoryMetricReader`` to hand to
``collector.app.create_app(span_exporter=..., metric_reader=...)``: the app builds its own
providers around them, with its own Resource, exactly as in production. ``data()`` renders every
finished span and every metric point to JSON bytes (the sink the canary audit scans), and
``resources()`` yields every Resource attribute set seen (the resource audit checks them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = [
    "ALLOWED_RESOURCE_KEYS",
    "FORBIDDEN_ATTRIBUTE_PREFIXES",
    "OtelCapture",
    "forbidden_attributes",
]

#: The only Resource attributes the collector may export.
ALLOWED_RESOURCE_KEYS = frozenset({"service.name", "service.version"})

#: Attribute namespaces that identify a machine, a process, a person or a network peer.
FORBIDDEN_ATTRIBUTE_PREFIXES = (
    "service.instance.id",
    "host.",
    "process.",
    "user.",
    "enduser.",
    "os.",
    "device.",
    "container.",
    "k8s.",
    "cloud.",
    "client.",
    "source.",
    "network.peer.",
    "net.peer.",
    "net.sock.peer.",
    "http.client_ip",
    "user_agent.",
    "http.user_agent",
    "url.query",
    "url.full",
    "http.url",
    "http.target",
)


def forbidden_attributes(attributes: Mapping[str, Any]) -> list[str]:
    """The keys of ``attributes`` in an identifying namespace."""
    return sorted(k for k in attributes if k.startswith(FORBIDDEN_ATTRIBUTE_PREFIXES))


@dataclass
class OtelCapture:
    spans: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    metrics: InMemoryMetricReader = field(default_factory=InMemoryMetricReader)
    _collected: list[MetricsData] = field(default_factory=list)

    def collect_metrics(self) -> None:
        """Pull the current metric points (a pull reader: nothing is lost by calling it twice)."""
        data = self.metrics.get_metrics_data()
        if data is not None:
            self._collected.append(data)

    def data(self) -> bytes:
        """Every finished span and every collected metric point, as JSON text."""
        self.collect_metrics()
        parts = [span.to_json(indent=None) for span in self.spans.get_finished_spans()]
        parts += [data.to_json(indent=None) for data in self._collected]
        return "\n".join(parts).encode("utf-8")

    def resources(self) -> Iterator[dict[str, Any]]:
        """The Resource attributes of every span and metric seen."""
        for span in self.spans.get_finished_spans():
            yield dict(span.resource.attributes)
        self.collect_metrics()
        for data in self._collected:
            for rm in data.resource_metrics:
                yield dict(rm.resource.attributes)

    def attribute_sets(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(where, attributes) of every span, span event and metric data point."""
        for span in self.spans.get_finished_spans():
            yield f"span {span.name}", dict(span.attributes or {})
            for event in span.events:
                yield f"span event {event.name}", dict(event.attributes or {})
        self.collect_metrics()
        for data in self._collected:
            for rm in data.resource_metrics:
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        points = json.loads(metric.to_json(indent=None))["data"]["data_points"]
                        for point in points:
                            yield f"metric {metric.name}", dict(point.get("attributes") or {})
