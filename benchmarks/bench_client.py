"""Client hot paths: ring recording, signal building, report_friction with consent off, and
report_friction's latency with the collector up, down (refused) and black-holed (issue 16, 11)."""

from __future__ import annotations

import datetime as dt
import tempfile
import time
import timeit
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks._endpoints import black_hole, down_port, real_collector
from benchmarks._timing import median, percentile, table, verdict
from client.friction import ReportInput, build_signal, default_client_info
from client.runtime import Runtime
from client.sender import encode_batch
from contract.catalogue import load_catalogue
from contract.limits import WEEKLY_SIGNAL_LIMIT
from contract.schema import FrictionType, Outcome, signal_json

REPEAT = 15
#: report_friction calls timed per collector state, and the target (issue 16, finding 11).
REPORT_CALLS = 200
REPORT_P99_TARGET_MS = 50.0


def _ns(stmt: str, setup_globals: dict[str, object], number: int) -> float:
    """CPU nanoseconds of this thread per run of ``stmt`` (the median of ``REPEAT``): what the
    code costs, whatever else the shared machine runs."""
    runs = timeit.repeat(
        stmt, globals=setup_globals, number=number, repeat=REPEAT, timer=time.thread_time
    )
    return median(runs) / number * 1e9


def run() -> None:
    catalogue = load_catalogue()
    tool = catalogue.get("read_note")
    assert tool is not None
    entry = tool.ring_entries[Outcome.failed]

    # 1. the ring against a bare deque.append, interleaved so both see the same machine.
    with tempfile.TemporaryDirectory() as tmp:
        rt = Runtime.from_env({"LMCP_HOME": tmp})
        ring = rt.host.ring
        dq: deque[object] = deque(maxlen=10)
        g = {"ring": ring, "dq": dq, "entry": entry}
        bare, rec = [], []
        for _ in range(5):
            bare.append(_ns("dq.append(entry)", g, 200_000))
            rec.append(_ns("ring.record(entry)", g, 200_000))
        ring_ns, deque_ns = median(rec), median(bare)

        # 2. building + serialising one signal, as report_friction does after a failed call:
        # the agent's input validated, LMCP's failure context found, the signal built (a new
        # signal_id, today's day) and encoded as the batch body the sender posts. The widest
        # input (every optional enum given), consent and the weekly bound aside (their own
        # rows below and bench_hardening), no I/O.
        for _ in range(3):
            rt.host.dispatch("get_datetime", {})
        failed = rt.host.dispatch("read_note", {"note_name": "x" * 40})
        assert failed.error is not None and rt.host.last_failure is not None
        report = {
            "friction_type": "cannot_complete",
            "error_category": "not_found",
            "intent_category": "read_email",
            "tool_attempted": "read_note",
            "attempt_count": 3,
        }
        signal, ctx = rt.reporter.prepare(report)
        assert ctx is rt.host.last_failure and signal.args == ctx.args
        g2 = {"prepare": rt.reporter.prepare, "encode": encode_batch, "report": report}
        build_ns = _ns("encode([prepare(report)[0]])", g2, 5_000)
        # Of which: the model alone, written as the sender writes it (``signal_json``); and
        # written by pydantic's serializer instead (what this row measured before it followed
        # the real path, and the serializer the sender used until 2026-12).
        request = ReportInput(friction_type=FrictionType.cannot_complete)
        g3 = {
            "build_signal": build_signal,
            "signal_json": signal_json,
            "request": request,
            "ctx": ctx,
            "tool": ctx.tool,
            "client": default_client_info(),
            "day": dt.date(2026, 11, 30),
        }
        model_ns = _ns(
            "signal_json(build_signal(request, ctx, tool=tool, client=client, day=day))",
            g3,
            5_000,
        )
        pydantic_ns = _ns(
            "build_signal(request, ctx, tool=tool, client=client, day=day).model_dump_json()",
            g3,
            5_000,
        )
        rt.close()

    # 3. report_friction with consent off: by the settings file, and by DO_NOT_TRACK.
    off_rows = []
    for label, env, settings in (
        ("settings file off", {}, '{"anonymous_signals": false}'),
        ("DO_NOT_TRACK=1", {"DO_NOT_TRACK": "1"}, '{"anonymous_signals": true}'),
        ("no settings file", {}, None),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            if settings is not None:
                Path(tmp, "settings.json").write_text(settings)
            rt = Runtime.from_env({"LMCP_HOME": tmp, **env})
            args = {"friction_type": "cannot_complete", "tool_attempted": "read_note"}
            g3 = {"report": rt.reporter.report, "args": args}
            ns = _ns("report(args)", g3, 50_000)
            off_rows.append((label, ns))
            rt.close()

    rows = [
        (
            "ring.record (one call)",
            f"{ring_ns:.0f} ns",
            f"{ring_ns / deque_ns:.2f}x deque.append ({deque_ns:.0f} ns)",
            "<= 1 us and <= 2x",
            verdict(ring_ns <= 1000 and ring_ns <= 2 * deque_ns),
        ),
        (
            "build + serialise one signal (report_friction's path)",
            f"{build_ns / 1000:.1f} us",
            f"of which build_signal + signal_json {model_ns / 1000:.1f} us"
            f" (with model_dump_json: {pydantic_ns / 1000:.1f} us)",
            "<= 30 us",
            verdict(build_ns <= 30_000),
        ),
    ]
    for label, ns in off_rows:
        rows.append(
            (
                f"report_friction, consent off ({label})",
                f"{ns:.0f} ns",
                f"{ns / deque_ns:.0f}x deque.append",
                "<= 2 us",
                verdict(ns <= 2000),
            )
        )
    table(
        "client hot paths (CPU time of the calling thread, medians of 15 repeats)",
        ("what", "median", "ratio", "target", ""),
        rows,
    )
    report_latency()


@contextmanager
def _collector(state: str, tmp: Path) -> Iterator[int]:
    if state == "up":
        with real_collector(tmp / "collector.duckdb") as port:
            yield port
    elif state == "black-holed":
        with black_hole() as port:
            yield port
    else:
        yield down_port()


def report_latency(calls: int = REPORT_CALLS) -> None:
    """p50/p99 of one ``report_friction`` call, consent on, against each collector state.

    Every call is one that is sent (or queued): an installation sends at most
    ``WEEKLY_SIGNAL_LIMIT`` signals a week, so each ``WEEKLY_SIGNAL_LIMIT`` calls come from a new
    installation (a new ``LMCP_HOME``, set up outside the timed call)."""
    kinds = ("cannot_complete", "repeated_failure", "task_abandoned", "workaround_needed")
    rows = []
    for state in ("up", "down (refused)", "black-holed"):
        with tempfile.TemporaryDirectory() as tmp, _collector(state.split()[0], Path(tmp)) as port:
            tools = [t.name for t in load_catalogue()]
            times, sent, bounded = [], 0, 0
            rt: Runtime | None = None
            for i in range(calls):
                if i % WEEKLY_SIGNAL_LIMIT == 0:
                    if rt is not None:
                        rt.close()
                    env = {
                        "LMCP_HOME": str(Path(tmp, f"home-{i}")),
                        "LMCP_COLLECTOR_URL": f"http://127.0.0.1:{port}",
                    }
                    rt = Runtime.from_env(env)
                    rt.consent.set_enabled(True)
                assert rt is not None
                args = {"friction_type": kinds[i % 4], "tool_attempted": tools[i % len(tools)]}
                started = time.perf_counter()
                reply = rt.reporter.report(args)
                times.append((time.perf_counter() - started) * 1000)
                sent += reply.get("sent") is True
                bounded += reply.get("reason") in ("weekly_duplicate", "weekly_limit")
            if rt is not None:
                rt.close()
            if bounded:
                raise RuntimeError(f"{bounded} calls hit the weekly bound: not the path measured")
        p50, p99 = percentile(times, 50), percentile(times, 99)
        rows.append(
            (
                f"report_friction, collector {state}",
                f"{p50:.1f} ms",
                f"{p99:.1f} ms",
                f"{sent}/{calls} sent in the call",
                f"p99 <= {REPORT_P99_TARGET_MS:.0f} ms",
                verdict(p99 <= REPORT_P99_TARGET_MS),
            )
        )
    table(
        f"report_friction latency, consent on ({calls} calls each)",
        ("what", "p50", "p99", "", "target", ""),
        rows,
    )
