"""Finding 11: telemetry never slows the host.

``report_friction`` returns within a bound whether the collector is up, down (connection
refused) or black-holed (a listening socket that never answers); delivery happens in a
background thread with backoff, and the outbox drains itself when the collector returns. The
outbox appends in O(1) (the file is appended to, never rewritten) and ignores a torn last line.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks._endpoints import black_hole, down_port, real_collector
from client.outbox import Outbox
from client.paths import LmcpHome
from client.runtime import Runtime
from contract.schema import ClientInfo, ErrorClass, FrictionSignal, FrictionType, Platform, ToolName

#: Generous: the target is 50 ms p99 (benchmarks/bench_client.py); the old code took 1.5-5 s.
BOUND_S = 0.5
REPORTS = [
    {"friction_type": "cannot_complete", "tool_attempted": "read_note"},
    {"friction_type": "repeated_failure", "tool_attempted": "list_files"},
    {"friction_type": "other", "tool_attempted": "send_email"},
]


def _runtime(home: Path, port: int) -> Runtime:
    rt = Runtime.from_env(
        {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": f"http://127.0.0.1:{port}"}
    )
    rt.consent.set_enabled(True)
    return rt


def _timed_reports(rt: Runtime) -> list[tuple[float, dict[str, object]]]:
    out = []
    for args in REPORTS:
        started = time.perf_counter()
        reply = rt.reporter.report(args)
        out.append((time.perf_counter() - started, reply))
    return out


@pytest.fixture
def home_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "home"


def test_report_friction_does_not_block_when_the_collector_is_down(home_dir: Path) -> None:
    rt = _runtime(home_dir, down_port())
    try:
        timed = _timed_reports(rt)
    finally:
        rt.close()
    assert max(t for t, _ in timed) < BOUND_S, timed
    assert all(
        reply == {"sent": False, "queued": True, "reason": "collector_not_reached"}
        for _, reply in timed
    )
    assert len(Outbox(LmcpHome(home_dir))) == len(REPORTS)


def test_report_friction_does_not_block_on_a_black_hole(home_dir: Path) -> None:
    with black_hole() as port:
        rt = _runtime(home_dir, port)
        try:
            timed = _timed_reports(rt)
        finally:
            rt.close()
    assert max(t for t, _ in timed) < BOUND_S, timed
    assert all(reply.get("queued") is True for _, reply in timed)


@pytest.mark.slow
def test_outbox_drains_itself_when_the_collector_returns(home_dir: Path, tmp_path: Path) -> None:
    port = down_port()
    rt = _runtime(home_dir, port)
    try:
        assert all(reply.get("queued") for _, reply in _timed_reports(rt))
        with real_collector(tmp_path / "collector.duckdb", port):
            deadline = time.monotonic() + 45
            while len(rt.outbox) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert len(rt.outbox) == 0, "the outbox did not drain after the collector returned"
            assert rt.sent_log.count("delivered") == len(REPORTS)
            # And when it is up, a report is delivered within the call's bound.
            started = time.perf_counter()
            reply = rt.reporter.report({"friction_type": "other", "tool_attempted": "get_datetime"})
            assert time.perf_counter() - started < BOUND_S
            assert reply.get("sent") is True or reply.get("queued") is True
    finally:
        rt.close()


def _signal() -> FrictionSignal:
    return FrictionSignal(
        schema_version=2,
        signal_id=uuid.uuid4(),
        day=dt.date(2026, 11, 30),
        friction_type=FrictionType.other,
        tool_attempted=ToolName.list_files,
        error_class=ErrorClass.timeout,
        client=ClientInfo(version="1.0.0", platform=Platform.linux),
    )


def test_outbox_append_is_o1_it_never_rewrites_the_file(tmp_path: Path) -> None:
    home = LmcpHome(tmp_path / "home").ensure()
    box = Outbox(home)
    box.add([_signal() for _ in range(500)])
    inode, size = home.outbox.stat().st_ino, home.outbox.stat().st_size
    added = _signal()
    box.add([added])
    after = home.outbox.stat()
    # Same file (no atomic replace), grown by exactly one record.
    assert after.st_ino == inode
    assert after.st_size == size + len(added.model_dump_json()) + 1


def test_outbox_ignores_a_torn_last_line_and_appends_after_it(tmp_path: Path) -> None:
    home = LmcpHome(tmp_path / "home").ensure()
    first, second = _signal(), _signal()
    Outbox(home).add([first])
    with home.outbox.open("ab") as handle:  # a crash in the middle of the next append
        handle.write(second.model_dump_json().encode()[:40])
    box = Outbox(home)
    assert box.pending() == [first]
    third = _signal()
    box.add([third])
    assert Outbox(home).pending() == [first, third]
    assert not (home.root / "outbox.corrupt.json").exists()
