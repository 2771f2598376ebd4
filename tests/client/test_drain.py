"""One outbox drain: the delivery thread's, the last one on close and ``lmcp signals flush``
settle a backlog the same way, never send without consent, and the one on close stops at the
first batch that cannot be delivered (closing never waits on a down collector batch after
batch)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from client.delivery import BackgroundDelivery
from client.outbox import Outbox
from client.paths import LmcpHome
from client.runtime import Runtime
from client.sender import Sender
from client.sentlog import SentLog
from contract.limits import LATE_DAYS
from contract.schema import FrictionSignal
from tests.factories import TODAY, make_signal

from .conftest import Recorder

ONE = dt.timedelta(days=1)
LATE = TODAY - (LATE_DAYS + 5) * ONE


def _backlog(count: int, late_every: int) -> list[FrictionSignal]:
    """``count`` signals, oldest first, one in every ``late_every`` too late for its week."""
    return [make_signal(day=LATE if i % late_every == 0 else TODAY) for i in range(count)]


def _thread(rt: Runtime) -> None:
    assert rt.delivery is not None
    rt.delivery.drain()


def _close(rt: Runtime) -> None:
    rt.close()


def _flush(rt: Runtime) -> None:
    rt.reporter.flush()


DRAINS: dict[str, Callable[[Runtime], None]] = {
    "delivery thread": _thread,
    "close": _close,
    "lmcp signals flush": _flush,
}


def _runtime(home: LmcpHome, recorder: Recorder, **env: str) -> Runtime:
    return Runtime.from_env({"LMCP_HOME": str(home.root), **env}, transport=recorder.transport)


def _sent_ids(recorder: Recorder) -> list[str]:
    return [s["signal_id"] for r in recorder.requests for s in json.loads(r.content)["signals"]]


@pytest.mark.parametrize("drain", DRAINS.values(), ids=DRAINS.keys())
def test_every_drain_settles_a_backlog_the_same_way(
    home: LmcpHome, drain: Callable[[Runtime], None]
) -> None:
    backlog = _backlog(150, late_every=10)
    home.settings.write_text(json.dumps({"anonymous_signals": "on"}))
    Outbox(home).add(backlog)
    recorder = Recorder()
    rt = _runtime(home, recorder)
    try:
        drain(rt)
    finally:
        rt.close()
    fresh = [str(s.signal_id) for s in backlog if s.day == TODAY]
    assert _sent_ids(recorder) == fresh  # oldest first, in batches, the late ones never sent
    assert len(recorder.requests) == 2  # batches of 100: the 15 late ones go before sending
    assert len(Outbox(home)) == 0
    statuses = [e.status for e in SentLog(home).entries(200)]
    assert sorted(statuses) == sorted(["delivered"] * len(fresh) + ["expired"] * 15)


@pytest.mark.parametrize("drain", DRAINS.values(), ids=DRAINS.keys())
@pytest.mark.parametrize(
    ("choice", "env"),
    [
        ("local", {}),
        ("off", {}),
        ("on", {"DO_NOT_TRACK": "1"}),
        ("on", {"LMCP_ANONYMOUS_SIGNALS": "0"}),
    ],
)
def test_no_drain_sends_without_consent(
    home: LmcpHome, drain: Callable[[Runtime], None], choice: str, env: dict[str, str]
) -> None:
    Outbox(home).add(_backlog(5, late_every=2))
    home.settings.write_text(json.dumps({"anonymous_signals": choice}))
    recorder = Recorder()
    rt = _runtime(home, recorder, **env)
    try:
        drain(rt)
    finally:
        rt.close()
    assert recorder.requests == []
    assert len(Outbox(home)) == 5  # not even the late ones are touched: nothing ran


def test_close_stops_at_the_first_batch_it_cannot_deliver(home: LmcpHome) -> None:
    """A down collector and a backlog whose every batch holds late signals: one bounded try,
    its late signals dropped, the rest kept for the next run."""
    backlog = _backlog(250, late_every=50)  # 2 late signals in each batch of 100
    outbox, log = Outbox(home), SentLog(home)
    outbox.add(backlog)
    recorder = Recorder(*[httpx.ConnectError("down")] * 10)
    sender = Sender(transport=recorder.transport, today=lambda: TODAY)
    delivery = BackgroundDelivery(outbox, sender, log, lambda: True, close_attempt_s=0.5)
    assert delivery.close()
    sender.close()
    assert len(recorder.requests) == 1
    assert set(recorder.requests[0].extensions["timeout"].values()) == {0.5}
    assert [e.status for e in log.entries(200)] == ["expired"] * 2
    assert len(outbox) == 250 - 2


def test_a_drain_leaves_the_outbox_on_disk_as_it_settled_it(tmp_path: Path) -> None:
    """What a drain settled is gone for the next process too (the file, not only memory)."""
    home = LmcpHome(tmp_path / "home").ensure()
    home.settings.write_text(json.dumps({"anonymous_signals": "on"}))
    Outbox(home).add(_backlog(30, late_every=3))
    recorder = Recorder(httpx.Response(200), httpx.ConnectError("down"))
    rt = _runtime(home, recorder)
    try:
        assert rt.reporter.flush() == {"delivered": 20, "rejected": 0, "expired": 10, "pending": 0}
    finally:
        rt.close()
    assert Outbox(home).pending() == []
