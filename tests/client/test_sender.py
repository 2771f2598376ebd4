"""Retry, backoff, Retry-After and 4xx-drop, with httpx.MockTransport and a fake clock."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable

import httpx
import pytest

from client.sender import Delivery, Sender, parse_retry_after
from tests.factories import make_signal

from .conftest import Recorder


def make(recorder: Recorder, **kw: object) -> tuple[Sender, list[float]]:
    sleeps: list[float] = []
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
    sender = Sender(transport=rec.transport, budget_s=0.5, max_attempts=50, sleep=sleep)
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
    sender = Sender("http://127.0.0.1:9", budget_s=1.0, sleep=sleep)
    report = sender.send([make_signal()])
    assert report.status is Delivery.failed and report.attempts >= 1
    assert sum(asked) <= 1.0
    sender.close()
