"""Delivery: POST signals to the collector, retrying within bounds, never raising.

- httpx with explicit timeouts, no redirects, no environment proxies or ``.netrc``;
- tenacity retries transport errors, 5xx, 408 and 429 with exponential backoff and jitter,
  honouring ``Retry-After`` (seconds or an HTTP date), within ``max_attempts`` and a total
  ``budget_s``; a retry that cannot fit in the budget is not attempted;
- any other 4xx means the collector refused the batch: it is dropped (and counted), since
  sending it again would be refused again;
- a signal too late for its week's release (its day older than ``LATE_DAYS``: the collector
  would refuse it) is never sent: it is reported ``expired`` and dropped. A 422
  ``day_out_of_window`` (the collector's clock says so) expires the signals it points at, and
  the rest of the batch is sent again at once. A signal keeps the day it was built with, so a
  report built before midnight and delivered after counts in the week it was claimed for.
- consent is checked again right before EVERY POST, under the home's send lock, which
  recording a choice also takes (``ConsentGate.set_mode``): once ``lmcp signals off`` has
  returned, no POST starts, whatever was checked when the report began or the drain started.
  A POST already under way when the choice is recorded ends first (the choice waits for it).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)

from client._files import file_lock
from client._tls import tls_context
from client.collector_url import DEFAULT_URL
from contract.days import utc_today
from contract.limits import LATE_DAYS
from contract.schema import FrictionSignal, signal_json

__all__ = [
    "DAY_OUT_OF_WINDOW",
    "Delivery",
    "DeliveryReport",
    "Sender",
    "USER_AGENT",
    "encode_batch",
    "expired_by_clock",
    "parse_retry_after",
]

log = logging.getLogger(__name__)
USER_AGENT = "lmcp"  # no version, no platform: the signal already says what is needed


class Delivery(StrEnum):
    delivered = "delivered"
    rejected = "rejected"  # a 4xx: dropped, counted
    failed = "failed"  # not reached in the budget: keep it for later
    expired = "expired"  # too late for its week's release: dropped, never counted
    withdrawn = "withdrawn"  # signals no longer "on" when its POST was due: never sent


#: The problem code of a collector refusing a signal's day (``collector.ingest.check_days``).
DAY_OUT_OF_WINDOW = "day_out_of_window"
_POINTER = re.compile(r"^/signals/(\d+)/day$")


@dataclass(frozen=True, slots=True)
class DeliveryReport:
    """What became of one batch: ``expired`` names the signals dropped as too late (never
    sent, or refused for their day); ``status`` is what became of the others (``expired``
    when there were none)."""

    status: Delivery
    attempts: int
    http_status: int | None = None
    expired: tuple[uuid.UUID, ...] = ()


def expired_by_clock(signal: FrictionSignal, today: dt.date) -> bool:
    """Whether ``signal`` is too late for its week's release on ``today`` (``accepts_day``'s
    lower side: the collector would refuse it). A day ahead of this clock is left to the
    collector to judge: this clock may be the one that is behind."""
    return signal.day < today - dt.timedelta(days=LATE_DAYS)


def _unsent(late: tuple[uuid.UUID, ...]) -> DeliveryReport:
    """The report of a batch with nothing left to send: all expired, or empty."""
    return DeliveryReport(Delivery.expired if late else Delivery.delivered, 0, None, late)


def _pointed(response: httpx.Response, count: int) -> list[int] | None:
    """The batch positions a 422 ``day_out_of_window`` points at; None when it is another
    refusal. No usable pointer: every position (it refused the batch for its days)."""
    if response.status_code != 422:
        return None
    try:
        doc = response.json()
    except ValueError:
        return None
    if not isinstance(doc, dict) or doc.get("code") != DAY_OUT_OF_WINDOW:
        return None
    out: set[int] = set()
    errors = doc.get("errors")
    for error in errors if isinstance(errors, list) else ():
        match = _POINTER.match(str(error.get("pointer", ""))) if isinstance(error, dict) else None
        if match and int(match.group(1)) < count:
            out.add(int(match.group(1)))
    return sorted(out) if out else list(range(count))


class _Withdrawn(Exception):
    """Consent was no longer "on" when a POST was due: nothing is sent."""


class _Busy(Exception):
    """Another POST of this home holds the send lock, and this one does not wait for it."""


class _Retryable(Exception):
    def __init__(self, retry_after: float | None = None, http_status: int | None = None) -> None:
        super().__init__("retryable")
        self.retry_after = retry_after
        self.http_status = http_status


def encode_batch(signals: Sequence[FrictionSignal]) -> bytes:
    """The body of ``POST /v1/signals``: each signal's ``model_dump_json`` (``signal_json``
    writes the same bytes without pydantic's serializer)."""
    return ('{"signals":[' + ",".join([signal_json(s) for s in signals]) + "]}").encode()


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header, or None when absent or unusable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    delta = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, delta)


class Sender:
    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        transport: httpx.BaseTransport | None = None,
        max_attempts: int = 4,
        budget_s: float = 5.0,
        timeout_s: float = 2.0,
        sleep: Callable[[float], None] = time.sleep,
        today: Callable[[], dt.date] = utc_today,
        allowed: Callable[[], bool] | None = None,
        send_lock: Path | None = None,
    ) -> None:
        """``today``: the UTC day a signal's lateness is judged on (tests move it).
        ``allowed``: whether signals may be uploaded now (``ConsentGate.enabled``), asked right
        before each POST, holding ``send_lock`` (``LmcpHome.send_lock``) when one is given."""
        #: The collector's base URL as configured (``client.collector_url.url_problem`` checks it).
        self.url = url
        self._endpoint = url.rstrip("/") + "/v1/signals"
        self._max_attempts = max_attempts
        self._budget = budget_s
        self._timeout = timeout_s
        self._sleep = sleep
        self._today = today
        self._allowed = allowed
        self._send_lock = send_lock
        self._backoff = wait_exponential_jitter(multiplier=0.2, max=2.0, jitter=0.2)
        self._client = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(timeout_s, connect=min(1.0, timeout_s)),
            follow_redirects=False,
            trust_env=False,
            verify=tls_context(trust_env=False),
            headers={"user-agent": USER_AGENT, "content-type": "application/json"},
        )
        self.rejected = 0  # batches refused with a 4xx, since start

    @property
    def endpoint(self) -> str:
        return self._endpoint

    def close(self) -> None:
        self._client.close()

    def send(self, signals: Sequence[FrictionSignal]) -> DeliveryReport:
        """Deliver one batch, oldest first; too late signals are not sent. Never raises."""
        try:
            late, fresh = self._split(signals)
            if not fresh:
                return _unsent(late)
            attempts = 0
            while True:
                report, response = self._send(encode_batch(fresh))
                attempts += report.attempts
                if report.status is Delivery.withdrawn:
                    return DeliveryReport(Delivery.withdrawn, attempts, None, late)
                pointed = None if response is None else _pointed(response, len(fresh))
                if pointed is None:
                    break
                # Refused for their days: those are dropped; the rest goes again at once.
                late += tuple(fresh[i].signal_id for i in pointed)
                gone = set(pointed)
                fresh = [s for i, s in enumerate(fresh) if i not in gone]
                log.info("collector refused %d signal(s) as too late; dropped", len(pointed))
                if not fresh:
                    return DeliveryReport(Delivery.expired, attempts, 422, late)
            if report.status is Delivery.rejected:
                self.rejected += 1
                log.info("collector refused a batch with HTTP %s; dropped", report.http_status)
            return DeliveryReport(report.status, attempts, report.http_status, late)
        except Exception as exc:  # telemetry never breaks the host
            log.warning("signal delivery failed: %s", type(exc).__name__)
            return DeliveryReport(Delivery.failed, 0)

    def attempt(self, signals: Sequence[FrictionSignal], timeout_s: float) -> DeliveryReport:
        """One POST, no retry, every phase bounded by ``timeout_s`` (the in-call try of
        ``report_friction``, the last try on close). Too late signals are not sent; a 422
        ``day_out_of_window`` expires the signals it points at, and the others stay ``failed``
        (queued: the next drain sends them). Never raises."""
        try:
            late, fresh = self._split(signals)
        except Exception as exc:  # a broken clock: the background retries
            log.debug("in-call delivery failed: %s", type(exc).__name__)
            return DeliveryReport(Delivery.failed, 0)
        if not fresh:
            return _unsent(late)
        try:
            # Not waiting for another POST of this home: a tool call never waits on one.
            response = self._post(encode_batch(fresh), httpx.Timeout(timeout_s), wait=False)
        except _Withdrawn:
            return DeliveryReport(Delivery.withdrawn, 0, None, late)
        except _Busy:  # queued: the background drain sends it after the other POST
            return DeliveryReport(Delivery.failed, 0, None, late)
        except Exception as exc:  # refused, timed out, anything: the background retries
            log.debug("in-call delivery failed: %s", type(exc).__name__)
            return DeliveryReport(Delivery.failed, 1, None, late)
        status = response.status_code
        if 200 <= status < 300:
            return DeliveryReport(Delivery.delivered, 1, status, late)
        if status in (408, 429) or status >= 500:
            return DeliveryReport(Delivery.failed, 1, status, late)
        pointed = _pointed(response, len(fresh))
        if pointed is not None:
            late += tuple(fresh[i].signal_id for i in pointed)
            left = len(fresh) - len(pointed)
            return DeliveryReport(Delivery.failed if left else Delivery.expired, 1, status, late)
        self.rejected += 1
        return DeliveryReport(Delivery.rejected, 1, status, late)

    def _split(
        self, signals: Sequence[FrictionSignal]
    ) -> tuple[tuple[uuid.UUID, ...], list[FrictionSignal]]:
        """The ids too late to send on this clock's day, and the signals still to send."""
        today = self._today()
        late = tuple(s.signal_id for s in signals if expired_by_clock(s, today))
        gone = set(late)
        return late, [s for s in signals if s.signal_id not in gone]

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            return exc.retry_after
        return float(self._backoff(state))

    def _send(self, body: bytes) -> tuple[DeliveryReport, httpx.Response | None]:
        """POST ``body`` with the bounded retries; the report and the last response."""
        deadline = time.monotonic() + self._budget
        attempts = 0
        last_status: int | None = None
        last: httpx.Response | None = None

        def attempt() -> int:
            nonlocal attempts, last_status, last
            attempts += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Retryable()
            timeout = min(self._timeout, remaining)
            try:
                response = self._post(
                    body, httpx.Timeout(timeout, connect=min(1.0, timeout)), wait=True
                )
            except httpx.TransportError as exc:
                raise _Retryable() from exc
            last_status, last = response.status_code, response
            status = response.status_code
            if status in (408, 429) or status >= 500:
                raise _Retryable(parse_retry_after(response.headers.get("retry-after")), status)
            return status

        retrying = Retrying(
            stop=stop_after_attempt(self._max_attempts) | stop_before_delay(self._budget),
            wait=self._wait,
            retry=retry_if_exception_type(_Retryable),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            status = retrying(attempt)
        except _Retryable:
            return DeliveryReport(Delivery.failed, attempts, last_status), None
        except _Withdrawn:
            return DeliveryReport(Delivery.withdrawn, attempts - 1, last_status), None
        if 200 <= status < 300:
            return DeliveryReport(Delivery.delivered, attempts, status), last
        return DeliveryReport(Delivery.rejected, attempts, status), last

    def _post(self, body: bytes, timeout: httpx.Timeout, *, wait: bool) -> httpx.Response:
        """One POST of ``body``, consent asked right before it under the send lock (raises
        ``_Withdrawn``: nothing sent; ``_Busy``: the lock is held and ``wait`` is False)."""
        allowed = self._allowed
        if self._send_lock is None:
            if allowed is not None and not allowed():
                raise _Withdrawn()
            return self._client.post(self._endpoint, content=body, timeout=timeout)
        with file_lock(self._send_lock, wait=wait) as held:
            if not held:
                raise _Busy()
            if allowed is not None and not allowed():
                raise _Withdrawn()
            return self._client.post(self._endpoint, content=body, timeout=timeout)
