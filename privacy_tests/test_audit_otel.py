"""OpenTelemetry audit: the collector's spans and metrics carry an explicit minimal Resource
(``service.name``, ``service.version``) and no instance, host, process, user or peer attribute,
even when the environment asks for them (``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_SERVICE_NAME``, the
resource detectors). The client uses no OpenTelemetry of its own, and the MCP server turns off
the SDK's tracing middleware."""

from __future__ import annotations

import ast
import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from collector.settings import CollectorSettings
from collector.telemetry import Telemetry, build_resource
from privacy_tests.audit.otel import ALLOWED_RESOURCE_KEYS, OtelCapture, forbidden_attributes
from tests._servers import HANG_S, collector_process, running_collector
from tests.factories import BARE, signal_json

REPO = Path(__file__).resolve().parent.parent
TOKEN = "audit-read-token-not-a-secret"
HOSTILE_ENV = {
    "OTEL_RESOURCE_ATTRIBUTES": (
        "host.name=canary-host,user.name=canary-user,service.instance.id=canary-instance,"
        "process.owner=canary-owner,deployment.environment=canary-env"
    ),
    "OTEL_SERVICE_NAME": "canary-service",
    "OTEL_EXPERIMENTAL_RESOURCE_DETECTORS": "process,host,os",
}
CANARY_WORDS = ("canary-host", "canary-user", "canary-instance", "canary-owner", "canary-env")


def _signal() -> dict[str, object]:
    return signal_json(
        **BARE,
        day=dt.datetime.now(dt.UTC).date(),
        error_class="not_found",
        client={"version": "0.1.0", "platform": "linux"},
    )


def _traffic(base: str) -> None:
    """Every kind of request: accepted, refused, unauthorised, unknown, with a query string."""
    with httpx.Client(base_url=base, trust_env=False, timeout=HANG_S) as http:
        headers = {"user-agent": "canary-user-agent/1.0", "x-forwarded-for": "203.0.113.7"}
        assert http.post("/v1/signals", json={"signals": [_signal()]}, headers=headers).is_success
        http.post("/v1/signals", content=b'{"signals": [{"note": "canary-user"}]}')
        http.get("/v1/signals/count?since=canary-host", headers={"authorization": "Bearer x"})
        http.get("/v1/signals/count", headers={"authorization": f"Bearer {TOKEN}"})
        http.get("/no/such/route/canary-host?user=canary-user")
        http.get("/healthz")


@pytest.fixture
def hostile_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in HOSTILE_ENV.items():
        monkeypatch.setenv(key, value)
    yield


def _settings(tmp_path: Path, **extra: object) -> CollectorSettings:
    return CollectorSettings(
        db_path=tmp_path / "otel.duckdb",
        read_tokens=[SecretStr(TOKEN)],
        rate_limit_enabled=False,
        **extra,  # type: ignore[arg-type]
    )


def test_collector_spans_and_metrics_carry_only_the_minimal_resource(
    tmp_path: Path, hostile_env: None
) -> None:
    otel = OtelCapture()
    with running_collector(
        _settings(tmp_path), span_exporter=otel.spans, metric_reader=otel.metrics
    ) as base:
        _traffic(base)
        otel.collect_metrics()
    resources = list(otel.resources())
    assert otel.spans.get_finished_spans(), "no span was exported: the audit saw nothing"
    assert resources
    for attributes in resources:
        assert set(attributes) <= ALLOWED_RESOURCE_KEYS, sorted(attributes)
        assert attributes["service.name"] == "lmcp-collector"
    problems = [
        f"{where}: {forbidden_attributes(attrs)}"
        for where, attrs in otel.attribute_sets()
        if forbidden_attributes(attrs)
    ]
    assert problems == []
    exported = otel.data().decode()
    for word in (*CANARY_WORDS, "203.0.113.7", "canary-user-agent", "?user="):
        assert word not in exported, f"{word!r} reached the collector's telemetry"


def test_every_exporter_setting_builds_the_minimal_resource(
    tmp_path: Path, hostile_env: None
) -> None:
    """The production providers use the one explicit Resource (console and OTLP share
    ``build_resource``; the console path is built here, the OTLP one would need a network)."""
    assert dict(build_resource().attributes).keys() == ALLOWED_RESOURCE_KEYS
    telemetry = Telemetry.from_settings(_settings(tmp_path, otel_exporter="console"))
    try:
        resource = telemetry.tracer.resource  # type: ignore[attr-defined]
        assert set(resource.attributes) <= ALLOWED_RESOURCE_KEYS
    finally:
        telemetry.shutdown()


@pytest.mark.slow
def test_a_collector_process_exports_no_host_process_or_user(
    tmp_path: Path, hostile_env: None
) -> None:
    """The real thing: `lmcp collector serve` with the console exporter, the hostile environment
    inherited, traffic, a graceful stop; then its whole output is read."""
    settings = _settings(tmp_path, otel_exporter="console", otel_metric_interval_s=0.2)
    with collector_process(settings, log_path=tmp_path / "collector.log") as proc:
        _traffic(proc.base_url)
    output = proc.log()
    assert '"service.name": "lmcp-collector"' in output, "no span or metric reached stdout"
    for word in (*CANARY_WORDS, "203.0.113.7", "canary-user-agent"):
        assert word not in output, f"{word!r} reached the collector process's output"
    for key in ("service.instance.id", "host.name", "host.id", "process.pid", "process.owner"):
        assert f'"{key}"' not in output, f"{key} reached the collector process's telemetry"


# -- the client --------------------------------------------------------------------------------


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_client_uses_no_opentelemetry() -> None:
    users = [
        str(path.relative_to(REPO))
        for path in sorted((REPO / "client").rglob("*.py"))
        if any(name.split(".")[0] == "opentelemetry" for name in _imports(path))
    ]
    assert users == [], "the client emits telemetry of its own: audit its Resource here"


def test_the_mcp_server_turns_off_the_sdk_tracing_middleware(tmp_path: Path) -> None:
    from client.mcp_server import build_server
    from client.runtime import Runtime

    with Runtime.from_env({"LMCP_HOME": str(tmp_path)}) as rt:
        server = build_server(rt.host)
    assert list(getattr(server, "middleware", [])) == []


def test_the_read_token_never_reaches_telemetry(tmp_path: Path) -> None:
    otel = OtelCapture()
    with running_collector(
        _settings(tmp_path), span_exporter=otel.spans, metric_reader=otel.metrics
    ) as base:
        _traffic(base)
    data = otel.data()
    assert TOKEN.encode() not in data and b"Bearer" not in data
    assert json.dumps(TOKEN).encode() not in data
