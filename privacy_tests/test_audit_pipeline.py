"""THE cross-pipeline canary audit: one canary of every kind is planted where a user's data really
goes, real failures are driven through ``ToolHost``, recipes, Cloud Skill calls and the MCP server
(``lmcp mcp`` spawned over stdio, driven by the MCP SDK's real client), reported, sent through a
REAL collector on loopback into a DuckDB file, analysed, rendered as the HTML report and served
by the dashboard; then EVERY sink is searched for EVERY canary, raw and encoded.

Sinks: the wire bytes of ``POST /v1/signals``; the client's outbox, sent log and latest-failure
file; what agents read in error results; every log record of the process (client and collector,
root and non-propagating loggers, DEBUG and up); the MCP server's stderr; the collector's answers
to hostile requests; OpenTelemetry spans and metrics (in-memory exporters); the DuckDB file's
bytes and its decoded contents; the Parquet export (bytes and decoded) and the CSV export; the
triage JSON; the HTML report, its Markdown and charts; the dashboard's pages (the overview, every
tool's, the page of every friction stored) and every download they link, and its answers to a
planted value in each path segment and period of its friction pages and downloads.

One failure line names the sink and the canary's kind (``privacy_tests.audit.scan``)."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from analysis import Filters, open_db
from analysis._released import RELEASED_QUESTIONS
from analysis.report import answer_all, build_report
from client.runtime import Runtime
from privacy_tests.audit.canaries import Canary, CanaryKind, canaries
from privacy_tests.audit.dashboard import (
    DashboardRead,
    assert_downloads_read,
    frictions_of,
    read_dashboard,
)
from privacy_tests.audit.pipeline import (
    Pipeline,
    client_sinks,
    start_pipeline,
    table_sinks,
    user_data,
)
from privacy_tests.audit.scan import ScanStats, assert_no_leaks, find_leaks
from privacy_tests.audit.workload import (
    HostileLog,
    RecordingTransport,
    error_messages,
    hostile_requests,
    plant_and_fail,
)
from tests._servers import HANG_S

pytestmark = pytest.mark.slow  # every test here starts a process

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"
TOKEN = "pipeline-audit-read-token-not-a-secret"
STEWARD = "pipeline-audit-steward-token-not-a-secret"
K = 2  # the smallest k of the steward's exact report: the most rows reach it
#: The audit's own budget, not the hypothesis profile's: each example is a whole pipeline run
#: and the closing figures report how many ran; raise it with these variables for a deep audit.
CLIENT_EXAMPLES = int(os.environ.get("LMCP_AUDIT_EXAMPLES", "12"))
MCP_EXAMPLES = int(os.environ.get("LMCP_AUDIT_MCP_EXAMPLES", "2"))
#: A leak is reported by sink and kind at once; shrinking a pipeline run would take minutes.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
MUTE_OWN_CLIENT = ("httpx", "httpcore")  # the TEST's requests carry canaries on purpose


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    with start_pipeline(tmp_path_factory.mktemp("pipeline"), team=TOKEN, steward=STEWARD) as handle:
        yield handle


# -- the MCP leg -------------------------------------------------------------------------------


def _mcp_calls(c: Mapping[CanaryKind, Canary]) -> list[tuple[str, dict[str, Any]]]:
    title, email = c[CanaryKind.note_title].text, c[CanaryKind.email].text
    number = c[CanaryKind.large_number].number or 10**15
    return [
        ("create_note", {"note_name": title, "body": c[CanaryKind.mail_body].text}),
        ("read_note", {"note_name": email}),
        ("read_file", {"path": c[CanaryKind.home_path_windows].text}),
        ("list_notes", {"limit": number}),
        ("send_email", {"to": [email], "subject": title, "body": "x", "bcc": email}),
        ("recipe_run", {"name": c[CanaryKind.recipe_name].text, "params": {"p": number}}),
        (c[CanaryKind.param_value].text, {"token": c[CanaryKind.bearer_token].text}),
        ("report_friction", {"friction_type": "cannot_complete", "tool_attempted": "read_note"}),
        ("report_friction", {"friction_type": "repeated_failure", "attempt_count": number}),
    ]


async def _mcp_session(
    env: dict[str, str], c: Mapping[CanaryKind, Canary], errlog: TextIO
) -> tuple[bytes, int]:
    lmcp = str(Path(sys.executable).with_name("lmcp"))
    params = StdioServerParameters(command=lmcp, args=["mcp"], env=env, cwd=str(REPO))
    seen: list[str] = []
    sent = 0
    async with Client(stdio_client(params, errlog=errlog)) as client:
        for tool, args in _mcp_calls(c):
            try:
                result = await client.call_tool(tool, args)
            except MCPError as exc:  # the unknown tool: a protocol error
                seen.append(str(exc))
                continue
            payload = result.structured_content or {}
            if tool == "report_friction":
                reply = payload.get("result", {})
                sent += bool(reply.get("sent") or reply.get("queued"))
            elif result.is_error:  # what the agent reads of a failure
                seen.append(json.dumps(payload, ensure_ascii=False))
    return "\n".join(seen).encode("utf-8"), sent


# -- the audit ---------------------------------------------------------------------------------


def test_no_canary_reaches_any_sink(
    pipeline: Pipeline, tmp_path_factory: pytest.TempPathFactory
) -> None:
    planted: list[Canary] = []
    stats = ScanStats(set())
    hostile = HostileLog()
    with httpx.Client(base_url=pipeline.base, trust_env=False, timeout=HANG_S) as http:
        _audit(pipeline, tmp_path_factory, http, planted, stats, hostile)


def _audit(
    pipeline: Pipeline,
    tmp_path_factory: pytest.TempPathFactory,
    http: httpx.Client,
    planted: list[Canary],
    stats: ScanStats,
    hostile: HostileLog,
) -> None:
    team = {"authorization": f"Bearer {TOKEN}"}
    steward = {"authorization": f"Bearer {STEWARD}"}
    delivered = 0

    @settings(
        max_examples=CLIENT_EXAMPLES,
        database=None,
        phases=NO_SHRINK,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(c=canaries())
    def through_the_host(c: dict[CanaryKind, Canary]) -> None:
        nonlocal delivered
        home = tmp_path_factory.mktemp("home")
        (home / "settings.json").write_text('{"anonymous_signals": "on"}')  # the user chose on
        wire = RecordingTransport()
        env = {
            "LMCP_HOME": str(home),
            "LMCP_COLLECTOR_URL": pipeline.base,
        }
        rt = Runtime.from_env(env, transport=wire)
        try:
            results = plant_and_fail(rt, c)
        finally:
            rt.close()
        with pipeline.logs.muting_this_thread(*MUTE_OWN_CLIENT):
            hostile_requests(http, c, TOKEN, hostile)
        reports = [r for r in results if r.tool == "report_friction"]
        # Delivered in the call or queued for the background thread (drained by rt.close()).
        assert all(r.ok and (r.result.get("sent") or r.result.get("queued")) for r in reports), [
            r.to_dict() for r in reports
        ]
        delivered += len(reports)
        # the control: the canaries really are in the user's data (the planting worked)
        at_rest = find_leaks({"user data": user_data(home)}, c.values())
        assert {leak.kind for leak in at_rest} >= {
            CanaryKind.note_title.value,
            CanaryKind.mail_body.value,
            CanaryKind.long_unicode.value,
        }
        sinks = {
            "wire: POST /v1/signals": wire.signals_wire(),
            "agent-visible error messages": error_messages(results),
            "log records (client and collector)": pipeline.logs.data(),
            "collector answers to hostile requests": hostile.data(),
            **client_sinks(home, "client"),
        }
        assert wire.signals_wire(), "no signal went over the wire"
        assert_no_leaks(sinks, c.values(), stats)
        planted.extend(c.values())

    @settings(
        max_examples=MCP_EXAMPLES,
        database=None,
        phases=NO_SHRINK,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(c=canaries())
    def over_mcp(c: dict[CanaryKind, Canary]) -> None:
        nonlocal delivered
        home = tmp_path_factory.mktemp("mcp-home")
        (home / "settings.json").write_text('{"anonymous_signals": "on"}')  # the user chose on
        env = {
            "LMCP_HOME": str(home),
            "LMCP_COLLECTOR_URL": pipeline.base,
            "PYTHONPATH": str(REPO),
            "PATH": os.environ.get("PATH", ""),
        }
        with (home / "mcp-stderr.log").open("w+", encoding="utf-8") as errlog:
            messages, sent = anyio.run(_mcp_session, env, c, errlog)
            errlog.seek(0)
            stderr = errlog.read().encode("utf-8")
        assert sent == 2, "the MCP server did not deliver its reports"
        delivered += sent
        sinks = {
            "MCP: error results and protocol errors": messages,
            "MCP server stderr": stderr,
            **client_sinks(home, "MCP client"),
        }
        assert_no_leaks(sinks, c.values(), stats)
        planted.extend(c.values())

    through_the_host()
    over_mcp()

    # -- the collector side: read API, triage, dashboard, while it runs ----------------------
    with pipeline.logs.muting_this_thread(*MUTE_OWN_CLIENT):
        count = http.get("/v1/signals/count", headers=steward).json()["count"]
        parquet = http.get("/v1/signals/export", params={"format": "parquet"}, headers=steward)
        csv = http.get("/v1/signals/export", params={"format": "csv"}, headers=steward)
        triage = [http.get("/v1/triage", headers=team)] + [
            http.get(f"/v1/triage/{q.value}", headers=team) for q in RELEASED_QUESTIONS
        ]
        parquet_rows = pq.read_table(io.BytesIO(parquet.content)).to_pylist()
        login = http.post("/dashboard/login", data={"token": TOKEN})
        # One planted value of every kind, sent in every path segment and period it could take.
        sent = [c.text for c in {c.kind: c for c in planted}.values()]
        dashboard = read_dashboard(http, frictions_of(parquet_rows), hostile=sent)
    assert count >= delivered > 0, "the collector did not store the reports"
    assert parquet.status_code == csv.status_code == 200
    # Nothing is released while the collector runs (today's week is open): the listing answers,
    # and each question says which days no release covers (a problem: a sink like any answer).
    assert triage[0].status_code == 200, triage[0].status_code
    assert all(r.status_code == 404 and r.json()["code"] == "not_covered" for r in triage[1:]), [
        r.status_code for r in triage
    ]
    assert login.status_code in (200, 303) and dashboard.failed() == []
    _read_in_full(dashboard)

    pipeline.stop()
    otel_data = pipeline.otel.data()
    assert otel_data, "no span or metric was exported"
    db_bytes = pipeline.file_bytes()
    con = open_db(pipeline.db_path)
    try:
        tables = table_sinks(con)
        # The reports are today's, in the open week: the steward's exact view answers closed
        # weeks only, so the report is read as of a day after this week closes.
        closes = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=10)
        report = build_report(answer_all(con, Filters(), k=K, exact=True, today=closes))
    finally:
        con.close()
    assert "read_note" in report.html
    assert len(parquet_rows) == count
    sinks = {
        "log records (client and collector)": pipeline.logs.data(),
        "collector answers to hostile requests": hostile.data(),
        "OpenTelemetry spans and metrics": otel_data,
        "DuckDB file bytes": db_bytes,
        **tables,
        "Parquet export bytes": parquet.content,
        "Parquet export (decoded)": json.dumps(parquet_rows, default=str).encode(),
        "CSV export": csv.content,
        "triage JSON": b"\n".join(r.content for r in triage),
        "HTML report": report.html.encode(),
        "Markdown report and charts": (report.markdown + "".join(report.charts.values())).encode(),
        **dashboard.sinks(),
    }
    assert b" collector" in sinks["log records (client and collector)"], "no collector record seen"
    assert_no_leaks(sinks, planted, stats)
    _record(stats, planted, count, len(db_bytes))


def _read_in_full(dashboard: DashboardRead) -> None:
    """The dashboard's sinks are not empty: the audit would prove nothing of them."""
    frictions = dashboard.friction_pages()
    assert frictions, "no friction page was read"
    assert any(b"read_note" in r.content for r in frictions.values()), "no reported friction"
    assert_downloads_read(dashboard)
    assert dashboard.hostile and dashboard.not_refused() == []


def _record(stats: ScanStats, planted: list[Canary], signals: int, db_size: int) -> None:
    kinds = sorted({c.kind.value for c in planted})
    figures = {
        "canary_cases": len(planted),
        "canary_kinds": len(kinds),
        "sinks": len(stats.sinks),
        "sink_names": sorted(stats.sinks),
        "canary_sink_checks": stats.checks,
        "bytes_scanned": stats.bytes_scanned,
        "signals_stored": signals,
        "duckdb_file_bytes": db_size,
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "privacy-audit.json").write_text(json.dumps(figures, indent=2) + "\n")
    sys.stdout.write(
        f"\nprivacy audit: {len(planted)} canary cases ({len(kinds)} kinds) x "
        f"{len(stats.sinks)} sinks = {stats.checks} canary-sink checks over "
        f"{stats.bytes_scanned:,} bytes; {signals} signals stored\n"
    )
