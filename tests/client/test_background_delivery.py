"""Telemetry never slows the host.

``report_friction`` waits on the network within a bound (one try, no back-off) whether the
collector is up, down (connection refused) or black-holed (a listening socket that never
answers); delivery happens in a background thread with backoff, and the outbox drains itself
when the collector returns. What is checked is what the call asked of the network (each
request's timeouts, each sleep on the calling thread), never how long it took: a busy machine
cannot fail it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from benchmarks._endpoints import black_hole
from client.outbox import Outbox
from client.paths import LmcpHome
from client.runtime import Runtime
from collector.settings import CollectorSettings
from tests._servers import refused_port, running_collector, wait_until

#: The call's target (benchmarks/bench_client.py measures its p99): no phase of a network try
#: made inside ``report_friction`` may wait longer. The old code retried with back-off in the
#: call (1.5-5 s).
TARGET_S = 0.05
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


@dataclass
class _InCall:
    """What a report did on the calling thread: each request's timeouts, each sleep."""

    requests: list[dict[str, float]] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)


def _reports(
    rt: Runtime, reports: Sequence[Mapping[str, object]] = REPORTS
) -> list[tuple[_InCall, dict[str, object]]]:
    """Each report's reply and what it waited on in the call (the delivery thread's own
    requests and back-off sleeps are not the call's, and are not counted)."""
    caller = threading.current_thread()
    current = _InCall()

    def on_request(request: httpx.Request) -> None:
        if threading.current_thread() is caller:
            current.requests.append(dict(request.extensions["timeout"]))

    def sleep(seconds: float) -> None:
        if threading.current_thread() is caller:
            current.sleeps.append(seconds)
        time.sleep(seconds)

    rt.sender._client.event_hooks["request"].append(on_request)
    rt.sender._sleep = sleep
    out = []
    for args in reports:
        current = _InCall()
        reply = rt.reporter.report(args)
        out.append((current, reply))
    current = _InCall()  # what follows (the close's final try) is not a report's
    return out


def _bounded(in_call: _InCall) -> bool:
    """At most one try, every phase within the target, no back-off: the call never waits on
    the network longer than its target, however slow the machine or the collector."""
    timeouts = [t for request in in_call.requests for t in request.values()]
    return (
        len(in_call.requests) <= 1 and all(t <= TARGET_S for t in timeouts) and not in_call.sleeps
    )


@pytest.fixture
def home_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "home"


def test_report_friction_does_not_block_when_the_collector_is_down(home_dir: Path) -> None:
    with refused_port() as port:
        rt = _runtime(home_dir, port)
        try:
            reports = _reports(rt)
        finally:
            rt.close()
    assert all(_bounded(in_call) for in_call, _ in reports), reports
    assert all(
        reply == {"sent": False, "queued": True, "reason": "collector_not_reached"}
        for _, reply in reports
    )
    assert len(Outbox(LmcpHome(home_dir))) == len(REPORTS)


def test_report_friction_does_not_block_on_a_black_hole(home_dir: Path) -> None:
    with black_hole() as port:
        rt = _runtime(home_dir, port)
        try:
            reports = _reports(rt)
        finally:
            rt.close()
    assert all(_bounded(in_call) for in_call, _ in reports), reports
    assert sum(len(in_call.requests) for in_call, _ in reports) >= 1  # it did try
    assert all(reply.get("queued") is True for _, reply in reports)


@pytest.mark.slow
def test_outbox_drains_itself_when_the_collector_returns(home_dir: Path, tmp_path: Path) -> None:
    with refused_port() as port:  # down until the collector takes the port over
        rt = _runtime(home_dir, port)
        reports = _reports(rt)
    assert all(reply.get("queued") for _, reply in reports)
    try:
        settings = CollectorSettings(
            db_path=tmp_path / "collector.duckdb", rate_limit_enabled=False
        )
        with running_collector(settings, port=port):
            # However long the back-off has grown meanwhile (at most a minute).
            wait_until(lambda: len(rt.outbox) == 0, what="the outbox drain")
            assert rt.sent_log.count("delivered") == len(REPORTS)
            # And when it is up, a report waits within the call's bound too (delivered, or
            # queued when the machine is too busy to answer within it).
            fresh = {"friction_type": "other", "tool_attempted": "get_datetime"}
            ((in_call, reply),) = _reports(rt, [fresh])
            assert _bounded(in_call), in_call
            assert reply.get("sent") is True or reply.get("queued") is True
    finally:
        rt.close()
