"""THE generated canary audit: every kind of private value x every encoding x every position an
agent can fill (``privacy_tests.audit.cases``: more than 10,000 cases, each with its own marker)
is passed to the real client host, failed, built into a signal and reported, sent through a REAL
collector on loopback into a DuckDB file, released, exported and rendered; then EVERY sink is
searched for EVERY case, raw and encoded (``privacy_tests.audit.scan``).

One case in ten also runs through ``lmcp mcp`` (one server process, the MCP SDK's real client).
The cases run in batches, one installation (``LMCP_HOME``) per batch: an installation sends at
most C signals a day, so each batch reports up to C failures and builds the signal of every
other one without sending it (``FrictionReporter.prepare``, what ``preview`` shows).

Sinks, per installation: the wire bytes of ``POST /v1/signals``; what agents read in error
results; the signals built for every failure; every file of the client's own state under
``LMCP_HOME``; the collector's answers to hostile requests; over MCP, the error results, the
reports and protocol errors, and the server's stderr. For the whole run: every log record
(client and collector); OpenTelemetry spans and metrics; the DuckDB file's bytes and every
table decoded (signals, release cells and days, the steward audit log, ...); the steward's
Parquet and CSV exports; the triage JSON; the HTML and Markdown reports (released and exact);
the dashboard's pages (the overview, every tool's, the page of every friction stored) and every
download they link, and its answers to a planted value of every kind in each path segment and
period of its friction pages and downloads. ``LMCP_AUDIT_SEED`` replays a run (the seed is
printed)."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import anyio
import duckdb
import httpx
import pyarrow.parquet as pq
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from analysis._released import RELEASED_QUESTIONS
from analysis.report import answer_all, build_report
from client.errors import ToolFailure
from client.runtime import Runtime
from collector.releases.store import release_closed_periods
from contract.accountant import ReleasePlan
from contract.catalogue import load_catalogue
from privacy_tests.audit.canaries import Canary, CanaryKind
from privacy_tests.audit.cases import ENCODINGS, Case, generate_cases, place, positions
from privacy_tests.audit.dashboard import assert_downloads_read, frictions_of, read_dashboard
from privacy_tests.audit.pipeline import (
    Pipeline,
    client_sinks,
    start_pipeline,
    table_sinks,
    user_data,
)
from privacy_tests.audit.scan import NeedleIndex, ScanStats, assert_no_leaks
from privacy_tests.audit.workload import (
    HostileLog,
    RecordingTransport,
    error_messages,
    hostile_requests,
)
from tests._servers import HANG_S

pytestmark = pytest.mark.slow  # a server, thousands of calls, hundreds of installations

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"
TEAM = "generated-audit-read-token-not-a-secret"
STEWARD = "generated-audit-steward-token-not-a-secret"
K = 2
SEED = int(os.environ.get("LMCP_AUDIT_SEED", random.SystemRandom().randrange(2**32)))
#: Cases per installation: C of them are reported, every one is built into a signal.
BATCH = 60
#: The collector's answers to canaries sent straight at it: once every this many batches.
HOSTILE_EVERY = 4
#: One case in this many also runs through `lmcp mcp` (one server process for all of them).
MCP_SHARE = 10
MCP_TIMEOUT_S = 240
MUTE_OWN_CLIENT = ("httpx", "httpcore")  # the TEST's requests carry canaries on purpose
_FRICTION = ("cannot_complete", "repeated_failure", "workaround_needed", "task_abandoned")
_TOOLS = frozenset(t.name for t in load_catalogue()) - {"report_friction"}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pipeline]:
    with start_pipeline(tmp_path_factory.mktemp("generated"), team=TEAM, steward=STEWARD) as handle:
        yield handle


def _batches(cases: list[Case]) -> Iterator[list[Case]]:
    for start in range(0, len(cases), BATCH):
        yield cases[start : start + BATCH]


def _one_per_kind(batch: list[Case]) -> dict[CanaryKind, Canary] | None:
    found = {c.canary.kind: c.canary for c in reversed(batch) if c.encoding == "plain"}
    return found if len(found) == len(CanaryKind) else None


def _where(cases: list[Case]) -> dict[str, str]:
    """Marker -> where and how it was planted, for a failure line (never the value)."""
    return {c.canary.marker: f"{c.position} ({c.encoding})" for c in cases}


class _Run:
    """What the installations left: counts and the sinks scanned at the end."""

    def __init__(self) -> None:
        self.stats = ScanStats(set())
        self.hostile = HostileLog()
        self.reported = self.built = self.at_rest = self.over_mcp = 0


def _installation(
    pipeline: Pipeline, home: Path, batch: list[Case], http: httpx.Client, run: _Run, n: int
) -> None:
    home.mkdir()
    (home / "settings.json").write_text('{"anonymous_signals": "on"}')  # the user chose on
    wire = RecordingTransport()
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": pipeline.base}
    rt = Runtime.from_env(env, transport=wire)
    results, built = [], []
    try:
        for i, case in enumerate(batch):
            tool, args = place(case)
            results.append(rt.host.dispatch(tool, args))
            if tool == "report_friction":
                continue  # the report itself is the position
            report = {"friction_type": _FRICTION[(n + i) % len(_FRICTION)]}
            if tool in _TOOLS:
                report["tool_attempted"] = tool
            try:
                built.append(rt.reporter.prepare(report)[0].model_dump_json())
            except ToolFailure:
                pass
            results.append(rt.host.dispatch("report_friction", report))
    finally:
        rt.close()
    c = _one_per_kind(batch)
    if c is not None and n % HOSTILE_EVERY == 0:
        with pipeline.logs.muting_this_thread(*MUTE_OWN_CLIENT):
            hostile_requests(http, c, TEAM, run.hostile)
    replies = [r.result for r in results if isinstance(r.result, dict)]
    run.reported += sum(bool(r.get("sent") or r.get("queued")) for r in replies)
    run.built += len(built)
    planted = [case.canary for case in batch]
    index = NeedleIndex(planted)
    run.at_rest += len(index.search(user_data(home)))  # the control: planting worked
    sinks = {
        "wire: POST /v1/signals": wire.signals_wire(),
        "agent-visible error messages": error_messages(results),
        "signals built for every failure": "\n".join(built).encode(),
        **client_sinks(home, "client"),
    }
    assert_no_leaks(sinks, planted, run.stats, index, _where(batch))


# -- the MCP leg: a share of the cases through `lmcp mcp` over stdio (the MCP SDK's client) -----


async def _mcp_session(env: dict[str, str], batch: list[Case], errlog: TextIO) -> list[str]:
    lmcp = str(Path(sys.executable).with_name("lmcp"))
    params = StdioServerParameters(command=lmcp, args=["mcp"], env=env, cwd=str(REPO))
    seen: list[str] = []
    with anyio.fail_after(MCP_TIMEOUT_S):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            for i, case in enumerate(batch):
                tool, args = place(case)
                calls = [(tool, args)]
                if tool in _TOOLS:
                    report = {"friction_type": _FRICTION[i % 4], "tool_attempted": tool}
                    calls.append(("report_friction", report))
                for name, arguments in calls:
                    try:
                        result = await client.call_tool(name, arguments)
                    except MCPError as exc:  # an unknown tool: a protocol error
                        seen.append(str(exc))
                        continue
                    if result.is_error or name == "report_friction":  # a success may echo
                        seen.append(json.dumps(result.structured_content, ensure_ascii=False))
                        seen += [getattr(c, "text", "") for c in result.content]
    return seen


def _over_mcp(pipeline: Pipeline, home: Path, batch: list[Case], run: _Run) -> None:
    home.mkdir()
    (home / "settings.json").write_text('{"anonymous_signals": "on"}')  # the user chose on
    env = {
        "LMCP_HOME": str(home),
        "LMCP_COLLECTOR_URL": pipeline.base,
        "PYTHONPATH": str(REPO),
        "PATH": os.environ.get("PATH", ""),
    }
    with (home.parent / "mcp-stderr.log").open("w+", encoding="utf-8") as errlog:
        seen = anyio.run(_mcp_session, env, batch, errlog)
        errlog.seek(0)
        stderr = errlog.read().encode("utf-8")
    assert sum('"sent": true' in s or '"queued": true' in s for s in seen), "nothing reported"
    messages = "\n".join(seen).encode("utf-8", "surrogatepass")
    sinks = {
        "MCP: error results, reports and protocol errors": messages,
        "MCP server stderr": stderr,
        **client_sinks(home, "MCP client"),
    }
    assert_no_leaks(sinks, [c.canary for c in batch], run.stats, where=_where(batch))
    run.over_mcp += len(batch)


def test_no_generated_canary_reaches_any_sink(
    pipeline: Pipeline, tmp_path_factory: pytest.TempPathFactory
) -> None:
    started = time.perf_counter()
    cases = generate_cases(SEED)
    assert len(cases) >= 10_000
    run = _Run()
    homes = tmp_path_factory.mktemp("homes")
    team = {"authorization": f"Bearer {TEAM}"}
    steward = {"authorization": f"Bearer {STEWARD}"}
    with httpx.Client(base_url=pipeline.base, trust_env=False, timeout=HANG_S) as http:
        for n, batch in enumerate(_batches(cases)):
            _installation(pipeline, homes / f"i{n}", batch, http, run, n)
        _over_mcp(pipeline, homes / "mcp", cases[::MCP_SHARE], run)
        with pipeline.logs.muting_this_thread(*MUTE_OWN_CLIENT):
            count = http.get("/v1/signals/count", headers=steward).json()["count"]
            parquet = http.get("/v1/signals/export", params={"format": "parquet"}, headers=steward)
            csv = http.get("/v1/signals/export", params={"format": "csv"}, headers=steward)
            triage = [http.get("/v1/triage", headers=team)] + [
                http.get(f"/v1/triage/{q.value}", headers=team) for q in RELEASED_QUESTIONS
            ]
            parquet_rows = pq.read_table(io.BytesIO(parquet.content)).to_pylist()
            login = http.post("/dashboard/login", data={"token": TEAM})
            # One case of every kind as planted plain, sent in every path segment and period.
            plain = {c.canary.kind: c.canary.text for c in cases if c.encoding == "plain"}
            dashboard = read_dashboard(http, frictions_of(parquet_rows), hostile=[*plain.values()])
    assert count >= run.reported > 0, "the collector did not store the reports"
    assert parquet.status_code == csv.status_code == 200
    # Nothing is released while the collector runs (today's week is open): the listing answers,
    # and each question says which days no release covers (a problem: a sink like any answer).
    assert triage[0].status_code == 200, triage[0].status_code
    assert all(r.status_code == 404 and r.json()["code"] == "not_covered" for r in triage[1:]), [
        r.status_code for r in triage
    ]
    assert login.status_code in (200, 303) and dashboard.failed() == []
    assert dashboard.friction_pages(), "no friction page was read"
    assert_downloads_read(dashboard)
    assert len(plain) == len(CanaryKind) and dashboard.not_refused() == []
    assert run.at_rest > 0, "no canary reached the user's own data: the planting failed"

    pipeline.stop()
    # Today's signals are released as the retention job will once their week closes.
    closes = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=10)
    with duckdb.connect(str(pipeline.db_path)) as con:
        # 21 days: the window reaches back to this week's Monday whatever day today is, so its
        # week is released (at 14, a run late in the week released its days only).
        released_now = release_closed_periods(con, closes, ReleasePlan(), retention_days=21)
        assert released_now, "nothing was released"
        tables = table_sinks(con)
        released = build_report(answer_all(con, k=K))
        exact = build_report(answer_all(con, k=K, exact=True, today=closes))
    assert len(parquet_rows) == count
    sinks = {
        "log records (client and collector)": pipeline.logs.data(),
        "collector answers to hostile requests": run.hostile.data(),
        "OpenTelemetry spans and metrics": pipeline.otel.data(),
        "DuckDB file bytes": pipeline.file_bytes(),
        **tables,
        "Parquet export bytes": parquet.content,
        "Parquet export (decoded)": json.dumps(parquet_rows, default=str).encode(),
        "CSV export": csv.content,
        "triage JSON": b"\n".join(r.content for r in triage),
        "HTML report (released)": released.html.encode(),
        "HTML report (exact)": exact.html.encode(),
        "Markdown reports and charts": (
            released.markdown + exact.markdown + "".join(exact.charts.values())
        ).encode(),
        **dashboard.sinks(),
    }
    for name in ("release_cells", "release_periods", "steward_audit", "signals"):
        assert f"DuckDB table {name} (decoded)" in sinks, name
    assert sinks["DuckDB table steward_audit (decoded)"], "the steward reads were not audited"
    planted = [case.canary for case in cases]
    assert_no_leaks(sinks, planted, run.stats, where=_where(cases))
    _record(run, cases, count, time.perf_counter() - started)


def _record(run: _Run, cases: list[Case], signals: int, seconds: float) -> None:
    figures = {
        "seed": SEED,
        "canary_cases": len(cases),
        "canary_kinds": len({c.canary.kind for c in cases}),
        "encodings": len(ENCODINGS),
        "positions": len(positions()),
        "installations": -(-len(cases) // BATCH),
        "sinks": len(run.stats.sinks),
        "canary_sink_checks": run.stats.checks,
        "bytes_scanned": run.stats.bytes_scanned,
        "signals_built": run.built,
        "cases_also_over_mcp": run.over_mcp,
        "signals_stored": signals,
        "cases_at_rest_in_user_data": run.at_rest,
        "seconds": round(seconds, 1),
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "privacy-audit-generated.json").write_text(json.dumps(figures, indent=2) + "\n")
    sys.stdout.write(
        f"\nprivacy audit (generated, seed {SEED}): {len(cases)} canary cases "
        f"({figures['canary_kinds']} kinds x {len(ENCODINGS)} encodings x "
        f"{figures['positions']} positions) x {len(run.stats.sinks)} sinks = "
        f"{run.stats.checks} canary-sink checks over {run.stats.bytes_scanned:,} bytes; "
        f"{run.built} signals built, {signals} stored; {run.over_mcp} cases also over MCP; "
        f"{seconds:.0f} s\n"
    )
