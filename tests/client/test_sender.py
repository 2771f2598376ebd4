"""Retry, backoff, Retry-After and 4xx-drop, with httpx.MockTransport and a fake clock; late
signals (older than ``LATE_DAYS``) never sent, and a 422 ``day_out_of_window`` dropping them."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from client._files import file_lock
from client.delivery import BackgroundDelivery, drain_outbox
from client.outbox import Outbox
from client.paths import LmcpHome
from client.sender import Delivery, Sender, expired_by_clock, parse_retry_after
from client.sentlog import SentLog
from contract.days import accepts_day
from contract.limits import LATE_DAYS
from tests.factories import TODAY, make_signal

from .conftest import Recorder


def make(recorder: Recorder, **kw: object) -> tuple[Sender, list[float]]:
    sleeps: list[float] = []
    kw.setdefault("today", lambda: TODAY)  # the test calendar's day: the signals' own
    sender = Sender(transport=recorder.transport, sleep=sleeps.append, **kw)  # type: ignore[arg-type]
    return sender, sleeps


def test_delivers_first_time_with_the_wire_body() -> None:
    rec = Recorder(httpx.Response(200, json={"accepted": 1, "duplicates": 0}))
    sender, sleeps = make(rec)
    s = make_signal()
    report = sender.send([s])
    assert report.status is Delivery.delivered and report.attempts == 1 and sleeps == []
    req = rec.requests[0]
    assert req.url.path == "/v1/signals" and req.method == "POST"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["user-agent"] == "lmcp"
    assert req.content == b'{"signals":[' + s.model_dump_json().encode() + b"]}"


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429, 408])
def test_retries_5xx_and_429_then_delivers(status: int) -> None:
    rec = Recorder(httpx.Response(status), httpx.Response(status), httpx.Response(200))
    sender, sleeps = make(rec)
    report = sender.send([make_signal()])
    assert report.status is Delivery.delivered and report.attempts == 3
    assert len(sleeps) == 2 and all(0 < s <= 2.2 for s in sleeps)


def test_backoff_grows_exponentially_with_jitter() -> None:
    rec = Recorder(*[httpx.Response(503)] * 3, httpx.Response(200))
    sender, sleeps = make(rec, max_attempts=4)
    sender.send([make_signal()])
    assert len(sleeps) == 3
    assert 0.2 <= sleeps[0] <= 0.4 and 0.4 <= sleeps[1] <= 0.6 and 0.8 <= sleeps[2] <= 1.0


def test_transport_errors_are_retried() -> None:
    rec = Recorder(httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.Response(200))
    sender, _ = make(rec)
    assert sender.send([make_signal()]).status is Delivery.delivered
    assert len(rec.requests) == 3


def test_retry_after_seconds_is_honoured() -> None:
    rec = Recorder(httpx.Response(429, headers={"retry-after": "2"}), httpx.Response(200))
    sender, sleeps = make(rec)
    assert sender.send([make_signal()]).status is Delivery.delivered
    assert sleeps == [2.0]


def test_retry_after_http_date_is_honoured() -> None:
    now = 1_800_000_000.0  # a whole second: the header has no fraction
    when = email.utils.formatdate(now + 3, usegmt=True)
    assert parse_retry_after(when, now=now) == 3.0
    assert parse_retry_after(email.utils.formatdate(now - 5, usegmt=True), now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_retry_after_beyond_the_budget_gives_up_at_once() -> None:
    rec = Recorder(httpx.Response(503, headers={"retry-after": "60"}), httpx.Response(200))
    sender, sleeps = make(rec, budget_s=5.0)
    report = sender.send([make_signal()])
    assert report.status is Delivery.failed and sleeps == [] and len(rec.requests) == 1


def test_attempts_are_capped() -> None:
    rec = Recorder(*[httpx.Response(500)] * 10)
    sender, sleeps = make(rec, max_attempts=3)
    report = sender.send([make_signal()])
    assert report.status is Delivery.failed and report.attempts == 3 and len(sleeps) == 2


def _real_sleeps() -> tuple[list[float], Callable[[float], None]]:
    """A real sleep that records what it was asked for."""
    asked: list[float] = []

    def sleep(seconds: float) -> None:
        asked.append(seconds)
        time.sleep(seconds)

    return asked, sleep


def test_total_time_is_bounded_with_a_real_clock() -> None:
    """The sender plans its back-off within the budget, on the real clock: never a wait that
    would end past it, and it stops trying once the budget is spent (not at attempt 50)."""
    rec = Recorder(*[httpx.ConnectError("down")] * 50)
    asked, sleep = _real_sleeps()
    sender = Sender(
        transport=rec.transport, budget_s=0.5, max_attempts=50, sleep=sleep, today=lambda: TODAY
    )
    report = sender.send([make_signal()])
    assert report.status is Delivery.failed
    assert sum(asked) <= 0.5 and report.attempts == len(asked) + 1 < 50


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 415, 422])
def test_4xx_is_dropped_and_counted_not_retried(status: int) -> None:
    rec = Recorder(httpx.Response(status), httpx.Response(200))
    sender, sleeps = make(rec)
    report = sender.send([make_signal()])
    assert report.status is Delivery.rejected and report.http_status == status
    assert len(rec.requests) == 1 and sleeps == [] and sender.rejected == 1


def test_never_raises_even_on_unexpected_errors() -> None:
    rec = Recorder(ValueError("a bug in the transport"))
    sender, _ = make(rec)
    assert sender.send([make_signal()]).status is Delivery.failed


def test_unreachable_real_socket_fails_within_the_budget() -> None:
    """A real refused connection: failed, with the back-off it planned inside the budget."""
    asked, sleep = _real_sleeps()
    sender = Sender("http://127.0.0.1:9", budget_s=1.0, sleep=sleep, today=lambda: TODAY)
    report = sender.send([make_signal()])
    assert report.status is Delivery.failed and report.attempts >= 1
    assert sum(asked) <= 1.0
    sender.close()


# -- late signals --------------------------------------------------------------------------
ONE = dt.timedelta(days=1)


def _days(request: httpx.Request) -> list[str]:
    return [s["day"] for s in json.loads(request.content)["signals"]]


def _out_of_window(*positions: int) -> httpx.Response:
    """The collector's refusal (``collector.ingest.check_days``) of the signals at
    ``positions``."""
    errors = [{"pointer": f"/signals/{i}/day", "rule": "day_window"} for i in positions]
    return httpx.Response(422, json={"code": "day_out_of_window", "errors": errors})


def test_lateness_is_the_collectors_window_on_the_lower_side() -> None:
    for offset in range(-10, 3):
        signal = make_signal(day=TODAY + offset * ONE)
        late = expired_by_clock(signal, TODAY)
        assert late == (offset < -LATE_DAYS)
        if late:
            assert not accepts_day(signal.day, TODAY)  # the collector would refuse it too


def test_a_late_signal_is_never_sent() -> None:
    rec = Recorder()
    sender, _ = make(rec)
    old = [make_signal(day=TODAY - (LATE_DAYS + n) * ONE) for n in (1, 5, 29)]
    report = sender.send(old)
    assert report.status is Delivery.expired and rec.requests == []
    assert set(report.expired) == {s.signal_id for s in old}
    fresh = make_signal(day=TODAY - LATE_DAYS * ONE)
    report = sender.send([*old, fresh])
    assert report.status is Delivery.delivered and set(report.expired) == {s.signal_id for s in old}
    assert [_days(r) for r in rec.requests] == [[fresh.day.isoformat()]]


def test_a_day_out_of_window_drops_the_named_signals_and_sends_the_rest_at_once() -> None:
    """The collector's clock is ahead of this one: it names the signals it refuses for their
    day; those are dropped (never retried), the rest goes again without waiting."""
    batch = [make_signal() for _ in range(4)]
    rec = Recorder(_out_of_window(0, 2), httpx.Response(200))
    sender, sleeps = make(rec)
    report = sender.send(batch)
    assert report.status is Delivery.delivered and sleeps == []
    assert set(report.expired) == {batch[0].signal_id, batch[2].signal_id}
    second = json.loads(rec.requests[1].content)["signals"]
    assert [s["signal_id"] for s in second] == [str(batch[1].signal_id), str(batch[3].signal_id)]
    assert sender.rejected == 0


def test_a_day_out_of_window_without_pointers_drops_the_batch_not_retried() -> None:
    batch = [make_signal() for _ in range(3)]
    rec = Recorder(httpx.Response(422, json={"code": "day_out_of_window"}), httpx.Response(200))
    sender, _ = make(rec)
    report = sender.send(batch)
    assert report.status is Delivery.expired and len(rec.requests) == 1
    assert set(report.expired) == {s.signal_id for s in batch}
    # Another 422 is a refusal as before: dropped and counted, not expired.
    rec = Recorder(httpx.Response(422, json={"code": "validation_failed"}))
    sender, _ = make(rec)
    report = sender.send(batch)
    assert report.status is Delivery.rejected and report.expired == ()


def test_the_in_call_attempt_expires_too() -> None:
    rec = Recorder(_out_of_window(0))
    sender, _ = make(rec)
    signal = make_signal()
    report = sender.attempt([signal], 1.0)
    assert report.status is Delivery.expired and report.expired == (signal.signal_id,)
    old = make_signal(day=TODAY - 10 * ONE)
    assert sender.attempt([old], 1.0).status is Delivery.expired and len(rec.requests) == 1


def test_a_backlog_sheds_its_late_signals_even_while_the_collector_is_down(
    home: LmcpHome,
) -> None:
    """30 days offline, the collector still down: the drain drops the 27 late days from the
    outbox (logged ``expired``) and keeps the 3 it can still deliver."""
    from client.sentlog import SentLog

    outbox, log = Outbox(home), SentLog(home)
    backlog = [make_signal(day=TODAY - n * ONE) for n in range(29, -1, -1)]  # oldest first
    outbox.add(backlog)
    rec = Recorder(*[httpx.ConnectError("down")] * 20)
    sender, _ = make(rec, max_attempts=2)
    done = drain_outbox(outbox, sender, log)
    assert done.failed and done.expired == 30 - (LATE_DAYS + 1)
    assert sorted(s.day for s in outbox.pending()) == [TODAY - n * ONE for n in (2, 1, 0)]
    assert [e.status for e in log.entries()] == ["expired"] * 27
    assert all(_days(r) == [(TODAY - n * ONE).isoformat() for n in (2, 1, 0)] for r in rec.requests)


def test_the_background_drain_drops_late_signals_and_delivers_the_rest(home: LmcpHome) -> None:
    from client.sentlog import SentLog

    outbox, log = Outbox(home), SentLog(home)
    outbox.add([make_signal(day=TODAY - n * ONE) for n in (9, 3, 2, 0)])
    rec = Recorder()
    sender, _ = make(rec)
    delivery = BackgroundDelivery(outbox, sender, log, lambda: True)
    done = delivery.drain()
    assert (done.delivered, done.expired, done.failed) == (2, 2, False)
    assert len(outbox) == 0
    assert sorted(e.status for e in log.entries()) == ["delivered"] * 2 + ["expired"] * 2
    assert _days(rec.requests[0]) == [(TODAY - 2 * ONE).isoformat(), TODAY.isoformat()]
    delivery.close()


def test_consent_is_asked_before_every_post_and_a_withdrawal_sends_nothing_more() -> None:
    """Signals turned off between two retries: the retry is not sent, the batch is kept."""
    rec = Recorder(httpx.Response(503), httpx.Response(200))
    answers = iter([True, False])
    sender, _ = make(rec, allowed=lambda: next(answers))
    report = sender.send([make_signal()])
    assert report.status is Delivery.withdrawn and report.attempts == 1
    assert len(rec.requests) == 1
    one_try = Sender(transport=rec.transport, today=lambda: TODAY, allowed=lambda: False)
    assert one_try.attempt([make_signal()], 0.5).status is Delivery.withdrawn
    assert len(rec.requests) == 1


def test_the_in_call_try_never_waits_for_another_post_of_its_home(tmp_path: Path) -> None:
    """The send lock held elsewhere (a drain's POST, or `off` being recorded): the in-call try
    queues at once instead of waiting; a drain waits for it and then asks consent."""
    rec = Recorder(httpx.Response(200))
    home = LmcpHome(tmp_path)
    sender, _ = make(rec, allowed=lambda: True, send_lock=home.send_lock)
    with file_lock(home.send_lock) as held:
        assert held
        with file_lock(home.send_lock, wait=False) as second:
            assert second is False
        report = sender.attempt([make_signal()], 0.5)
    assert report.status is Delivery.failed and report.attempts == 0 and rec.requests == []
    assert sender.attempt([make_signal()], 0.5).status is Delivery.delivered


def test_a_drain_stops_at_the_first_withdrawn_batch(tmp_path: Path) -> None:
    rec = Recorder(*[httpx.Response(200)] * 3)
    home = LmcpHome(tmp_path)
    outbox = Outbox(home)
    outbox.add([make_signal() for _ in range(250)])
    answers = iter([True, False, True])
    sender, _ = make(rec, allowed=lambda: next(answers))
    done = drain_outbox(outbox, sender, SentLog(home))
    assert (done.delivered, done.failed) == (100, False)
    assert len(rec.requests) == 1 and len(outbox) == 150
