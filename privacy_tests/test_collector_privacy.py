"""Privacy audit of the collector: smuggled canaries go nowhere; the schema cannot hold them.

A real uvicorn collector on loopback, with in-memory OpenTelemetry exporters and every log record
captured, receives requests that smuggle canary values in every way a sender could: an extra
field's value and name, unknown enum values and tool names, malformed JSON, a bad UUID or
version, query parameters, the URL path, and headers (User-Agent, X-Forwarded-For, Cookie,
Referer), and a repeated key whose first value is the canary. Each request must be refused (or,
for headers and the repeated key, accepted without the canary), and afterwards no canary may
appear in any response body or header, any log record, any span or metric, any row or the raw
bytes of the DuckDB file and its write-ahead log.
"""

from __future__ import annotations

import base64
import gzip
import json
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic import SecretStr

from collector.settings import CollectorSettings
from tests._servers import HANG_S, running_collector
from tests.factories import BARE, signal_json

TOKEN = "privacy-test-token-not-secret"


def _canary(kind: str) -> str:
    return f"CANARY{kind.upper().replace('-', '')}{uuid.uuid4().hex[:10]}"


def _signal(**changes: Any) -> dict[str, Any]:
    """A valid signal's wire JSON with ``changes`` written over it (valid or not)."""
    base = signal_json(
        **{
            **BARE,
            "error_class": "not_found",
            "ring": [
                {"tool": "list_notes", "outcome": "ok"},
                {"tool": "read_note", "outcome": "failed"},
            ],
            "client": {"version": "1.2.3", "platform": "linux"},
        }
    )
    base.update(changes)
    return base


def _body(*signals: dict[str, Any]) -> bytes:
    return json.dumps({"signals": list(signals)}).encode()


JSON = {"content-type": "application/json"}


@dataclass(frozen=True)
class Smuggle:
    kind: str
    send: Callable[[httpx.Client, str], httpx.Response]
    refused: bool = True


def _post(**changes: Any) -> Callable[[httpx.Client, str], httpx.Response]:
    """Send one signal whose fields ``changes`` (callables of the canary) replace."""

    def send(client: httpx.Client, canary: str) -> httpx.Response:
        fields = {key: make(canary) for key, make in changes.items()}
        return client.post("/v1/signals", content=_body(_signal(**fields)), headers=JSON)

    return send


def _send_headers(client: httpx.Client, canary: str) -> httpx.Response:
    headers = {
        **JSON,
        "user-agent": canary,
        "x-forwarded-for": f"203.0.113.7, {canary}",
        "cookie": f"id={canary}",
        "referer": f"http://{canary}.invalid/",
    }
    return client.post("/v1/signals", content=_body(_signal()), headers=headers)


def _extra_name(client: httpx.Client, canary: str) -> httpx.Response:
    return client.post("/v1/signals", content=_body(_signal(**{canary: 1})), headers=JSON)


def _gzipped(client: httpx.Client, canary: str) -> httpx.Response:
    body = gzip.compress(_body(_signal(note=canary)))
    return client.post("/v1/signals", content=body, headers={**JSON, "content-encoding": "gzip"})


def _raw(
    body: Callable[[str], bytes],
    headers: dict[str, str] | Callable[[str], dict[str, str]],
) -> Callable[[httpx.Client, str], httpx.Response]:
    def send(client: httpx.Client, canary: str) -> httpx.Response:
        h = headers(canary) if callable(headers) else headers
        return client.post("/v1/signals", content=body(canary), headers=h)

    return send


def _repeated_key(count: int) -> Callable[[httpx.Client, str], httpx.Response]:
    """A batch of ``count`` signals, one of which names ``tool_attempted`` twice: the canary
    first, a valid tool last. pydantic keeps the last (and accepts); nothing may keep the first.
    ``count`` >= 500 makes the refused body large: judged by pydantic item by item
    (collector.guard); less, whole.
    """

    def send(client: httpx.Client, canary: str) -> httpx.Response:
        texts = [json.dumps(_signal()) for _ in range(count)]
        valid = '"tool_attempted": "read_note"'
        assert valid in texts[-1]
        texts[-1] = texts[-1].replace(valid, f'"tool_attempted": "{canary}", {valid}')
        body = ('{"signals": [' + ", ".join(texts) + "]}").encode()
        return client.post("/v1/signals", content=body, headers=JSON)

    return send


SMUGGLES = [
    Smuggle("extra-field-value", _post(note=str)),
    Smuggle("extra-field-name", _extra_name),
    Smuggle("nested-extra", _post(app=lambda x: {"installed": True, "owner": x})),
    Smuggle("unknown-enum", _post(friction_type=str)),
    Smuggle("unknown-tool", _post(tool_attempted=str)),
    Smuggle("ring-tool", _post(ring=lambda x: [{"tool": x, "outcome": "ok"}])),
    Smuggle("arg-name", _post(args=lambda x: [{"name": x, "type": "string", "size": "0"}])),
    Smuggle("bad-uuid", _post(signal_id=str)),
    Smuggle("client-version", _post(client=lambda x: {"version": x, "platform": "linux"})),
    Smuggle("schema-version", _post(schema_version=str)),
    Smuggle("malformed-json", _raw(lambda x: b'{"signals": [' + x.encode(), JSON)),
    Smuggle("gzip-extra", _gzipped),
    Smuggle(
        "content-type", _raw(lambda x: _body(_signal()), lambda x: {"content-type": f"text/{x}"})
    ),
    Smuggle(
        "query-param",
        lambda c, x: c.get("/v1/signals/export", params={"format": x}, headers=_auth(TOKEN)),
    ),
    Smuggle("url-path", lambda c, x: c.get(f"/v1/{x}")),
    Smuggle("bearer-token", lambda c, x: c.get("/v1/signals/count", headers=_auth(x))),
    # Headers on an ACCEPTED request: ingested, but the header values go nowhere.
    Smuggle("headers", _send_headers, refused=False),
    # A repeated key: ACCEPTED (the last value is valid), and the first value goes nowhere.
    Smuggle("repeated-key", _repeated_key(1), refused=False),
    Smuggle("repeated-key-large-flush", _repeated_key(500), refused=False),
]


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


CLIENT_SIDE = {"httpx", "httpcore"}


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.split(".")[0] in CLIENT_SIDE:
            return  # the test's own HTTP client, not the collector
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        self.lines.append(f"{record.name}: {text}")


@dataclass
class Audit:
    canaries: dict[str, str]
    responses: dict[str, httpx.Response]
    logs: list[str]
    spans: list[str]
    metrics: str
    rows: str
    db_bytes: bytes


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Audit]:
    db_path = tmp_path_factory.mktemp("privacy") / "signals.duckdb"
    settings = CollectorSettings(
        db_path=db_path, read_tokens=[SecretStr(TOKEN)], rate_limit_enabled=False
    )
    spans = InMemorySpanExporter()
    reader = InMemoryMetricReader()
    handler = _Records()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    loggers = [
        logging.getLogger(n) for n in ("uvicorn", "uvicorn.error", "uvicorn.access", "collector")
    ]
    old = [(lg.level, lg.propagate) for lg in loggers]
    canaries = {s.kind: _canary(s.kind) for s in SMUGGLES}
    responses: dict[str, httpx.Response] = {}
    try:
        with running_collector(settings, span_exporter=spans, metric_reader=reader) as url:
            for lg in loggers:
                lg.setLevel(logging.DEBUG)
                lg.propagate = True
            with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as client:
                for smuggle in SMUGGLES:
                    responses[smuggle.kind] = smuggle.send(client, canaries[smuggle.kind])
            metrics_data = reader.get_metrics_data()
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        for lg, (level, propagate) in zip(loggers, old, strict=True):
            lg.setLevel(level)
            lg.propagate = propagate
    span_texts = [
        json.dumps(
            {
                "name": s.name,
                "attributes": dict(s.attributes or {}),
                "events": [e.name for e in s.events],
                "resource": dict(s.resource.attributes),
            },
            default=str,
        )
        for s in spans.get_finished_spans()
    ]
    with duckdb.connect(str(db_path), read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        rows = json.dumps(
            {t: con.execute(f'SELECT * FROM "{t}"').fetchall() for t in tables}, default=str
        )
    raw = b"".join(
        p.read_bytes() for p in db_path.parent.iterdir() if p.name.startswith(db_path.name)
    )
    yield Audit(
        canaries=canaries,
        responses=responses,
        logs=handler.lines,
        spans=span_texts,
        metrics=metrics_data.to_json() if metrics_data is not None else "",
        rows=rows,
        db_bytes=raw,
    )


def _forms(canary: str) -> list[bytes]:
    raw = canary.encode()
    return [raw, raw.lower(), base64.b64encode(raw), raw.hex().encode()]


@pytest.mark.parametrize("kind", [s.kind for s in SMUGGLES])
def test_smuggled_canary_is_refused_or_ignored(audit: Audit, kind: str) -> None:
    response = audit.responses[kind]
    smuggle = next(s for s in SMUGGLES if s.kind == kind)
    if smuggle.refused:
        assert 400 <= response.status_code < 500, response.status_code
        assert response.headers["content-type"].startswith("application/problem+json")
    else:
        assert response.status_code == 200
    assert "set-cookie" not in response.headers


@pytest.mark.parametrize("kind", [s.kind for s in SMUGGLES])
def test_canary_reaches_no_sink(audit: Audit, kind: str) -> None:
    canary = audit.canaries[kind]
    response = audit.responses[kind]
    sinks: dict[str, bytes] = {
        "response body": response.content,
        "response headers": json.dumps(dict(response.headers)).encode(),
        "log records": "\n".join(audit.logs).encode(),
        "spans": "\n".join(audit.spans).encode(),
        "metrics": audit.metrics.encode(),
        "database rows": audit.rows.encode(),
        "database file": audit.db_bytes,
    }
    for sink, content in sinks.items():
        for form in _forms(canary):
            assert form not in content, f"{kind} canary found in {sink}"


def test_the_audit_saw_real_traffic(audit: Audit) -> None:
    """Guards against a vacuous pass: the sinks were really populated."""
    # Ingestion has no per-request span (docs/privacy.md); the read routes have theirs.
    assert audit.spans
    assert "lmcp.collector.signals.accepted" in audit.metrics
    assert "lmcp.collector.requests.rejected" in audit.metrics
    # The large repeated-key batch: the fast decoder refused its first value, pydantic kept
    # the last (collector.guard), and the flush was written from the validated signals.
    assert audit.responses["repeated-key-large-flush"].json() == {
        "accepted": 500,
        "duplicates": 0,
    }
    assert len(audit.db_bytes) > 10_000
    assert json.loads(audit.rows)["signals"], "the accepted request's row should be stored"


def test_no_address_or_agent_in_logs(audit: Audit) -> None:
    joined = "\n".join(audit.logs)
    assert "127.0.0.1:" not in joined.replace("http://127.0.0.1:", "")
    assert "203.0.113.7" not in joined


# ---------------------------------------------------------------- the schema cannot hold it

ALLOWED_SCALARS = {"BOOLEAN", "UTINYINT", "USMALLINT", "DATE", "UUID", "ENUM"}


def _column_types(db: Path) -> dict[str, dict[str, str]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE NOT internal"
        ).fetchall()
        enums = {
            r[0]
            for r in con.execute(
                "SELECT type_name FROM duckdb_types() WHERE logical_type = 'ENUM'"
            ).fetchall()
        }
    out: dict[str, dict[str, str]] = {}
    for table, column, dtype in rows:
        out.setdefault(table, {})[column] = dtype
    out["__enums__"] = dict.fromkeys(enums, "ENUM")
    return out


def _only_closed_types(dtype: str, enums: set[str]) -> bool:
    """No free text: enums, bools, small ints, dates, UUIDs, and lists/structs of them."""
    import re

    closed = re.sub(r"ENUM\((?:'[^']*'(?:, )?)*\)", "ENUM", dtype)
    tokens = re.findall(r"[A-Za-z_][A-Za-z_0-9]*", closed)
    names = {"STRUCT", "name", "type", "size", "tool", "outcome"}
    return all(t in ALLOWED_SCALARS or t in enums or t in names for t in tokens)


def test_signals_table_cannot_hold_an_address_agent_or_text(audit: Audit, tmp_path: Path) -> None:
    from collector.db import signals_database

    db = signals_database(tmp_path / "schema.duckdb")
    db.open()
    db.close()
    types = _column_types(tmp_path / "schema.duckdb")
    enums = set(types.pop("__enums__"))
    signals = types["signals"]
    assert len(signals) == 23
    for column, dtype in signals.items():
        assert _only_closed_types(dtype, enums), f"signals.{column} is {dtype}"
        assert "VARCHAR" not in dtype and "TIMESTAMP" not in dtype and "TIME" not in dtype.split()
        assert not any(
            word in column for word in ("ip", "addr", "agent", "host", "user", "time", "request")
        )
    # The collector's only other table is its own migration ledger, written from file names.
    ours = {t for t in types if t in {"signals", "schema_migrations"}}
    assert ours == {"signals", "schema_migrations"}
    assert set(types["schema_migrations"]) == {"name", "sha256", "applied_day"}
    assert types["schema_migrations"]["applied_day"] == "DATE"
