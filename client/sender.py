"""Delivery: POST signals to the collector, retrying within bounds, never raising.

- httpx with explicit timeouts, no redirects, no environment proxies or ``.netrc``;
- tenacity retries transport errors, 5xx, 408 and 429 with exponential backoff and jitter,
  honouring ``Retry-After`` (seconds or an HTTP date), within ``max_attempts`` and a total
  ``budget_s``; a retry that cannot fit in the budget is not attempted;
- any other 4xx means the collector refused the batch: it is dropped (and counted), since
  sending it again would be refused again.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)

from client.collector_url import DEFAULT_URL
from contract.schema import FrictionSignal

__all__ = [
    "Delivery",
    "DeliveryReport",
    "Sender",
    "USER_AGENT",
    "encode_batch",
    "parse_retry_after",
]

log = logging.getLogger(__name__)
USER_AGENT = "lmcp"  # no version, no platform: the signal already says what is needed


class Delivery(StrEnum):
    delivered = "delivered"
    rejected = "rejected"  # a 4xx: dropped, counted
    failed = "failed"  # not reached in the budget: keep it for later


@dataclass(frozen=True, slots=True)
class DeliveryReport:
    status: Delivery
    attempts: int
    http_status: int | None = None


class _Retryable(Exception):
    def __init__(self, retry_after: float | None = None, http_status: int | None = None) -> None:
        super().__init__("retryable")
        self.retry_after = retry_after
        self.http_status = http_status


def encode_batch(signals: Sequence[FrictionSignal]) -> bytes:
    return b'{"signals":[' + b",".join(s.model_dump_json().encode() for s in signals) + b"]}"


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
    ) -> None:
        #: The collector's base URL as configured (``client.collector_url.url_problem`` checks it).
        self.url = url
        self._endpoint = url.rstrip("/") + "/v1/signals"
        self._max_attempts = max_attempts
        self._budget = budget_s
        self._timeout = timeout_s
        self._sleep = sleep
        self._backoff = wait_exponential_jitter(multiplier=0.2, max=2.0, jitter=0.2)
        self._client = httpx.Client(
            transport=transport,
            timeout=httpx.Timeout(timeout_s, connect=min(1.0, timeout_s)),
            follow_redirects=False,
            trust_env=False,
            headers={"user-agent": USER_AGENT, "content-type": "application/json"},
        )
        self.rejected = 0  # batches refused with a 4xx, since start

    @property
    def endpoint(self) -> str:
        return self._endpoint

    def close(self) -> None:
        self._client.close()

    def send(self, signals: Sequence[FrictionSignal]) -> DeliveryReport:
        """Deliver one batch. Never raises."""
        if not signals:
            return DeliveryReport(Delivery.delivered, 0)
        try:
            return self._send(encode_batch(signals))
        except Exception as exc:  # telemetry never breaks the host
            log.warning("signal delivery failed: %s", type(exc).__name__)
            return DeliveryReport(Delivery.failed, 0)

    def attempt(self, signals: Sequence[FrictionSignal], timeout_s: float) -> DeliveryReport:
        """One POST, no retry, every phase bounded by ``timeout_s`` (the in-call try of
        ``report_friction``). Never raises."""
        try:
            response = self._client.post(
                self._endpoint, content=encode_batch(signals), timeout=httpx.Timeout(timeout_s)
            )
        except Exception as exc:  # refused, timed out, anything: the background retries
            log.debug("in-call delivery failed: %s", type(exc).__name__)
            return DeliveryReport(Delivery.failed, 1)
        status = response.status_code
        if 200 <= status < 300:
            return DeliveryReport(Delivery.delivered, 1, status)
        if status in (408, 429) or status >= 500:
            return DeliveryReport(Delivery.failed, 1, status)
        self.rejected += 1
        return DeliveryReport(Delivery.rejected, 1, status)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            return exc.retry_after
        return float(self._backoff(state))

    def _send(self, body: bytes) -> DeliveryReport:
        deadline = time.monotonic() + self._budget
        attempts = 0
        last_status: int | None = None

        def attempt() -> int:
            nonlocal attempts, last_status
            attempts += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Retryable()
            timeout = min(self._timeout, remaining)
            try:
                response = self._client.post(
                    self._endpoint,
                    content=body,
                    timeout=httpx.Timeout(timeout, connect=min(1.0, timeout)),
                )
            except httpx.TransportError as exc:
                raise _Retryable() from exc
            last_status = response.status_code
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
            return DeliveryReport(Delivery.failed, attempts, last_status)
        if 200 <= status < 300:
            return DeliveryReport(Delivery.delivered, attempts, status)
        self.rejected += 1
        log.info("collector refused a batch with HTTP %d; dropped", status)
        return DeliveryReport(Delivery.rejected, attempts, status)
