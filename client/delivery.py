"""Background delivery: telemetry never slows the host.

``report_friction`` hands its signal to :meth:`BackgroundDelivery.submit`:
- unless the collector is known to be failing, ONE POST is tried in the call, every phase
  bounded by ``attempt_s`` (refused: at once; black-holed or slow: after ``attempt_s``);
- if it did not arrive, the signal is appended to the outbox (durable, O(1)) and the delivery
  thread is scheduled to retry after a back-off, so the call returns at once.
The thread drains the whole outbox in batches (with the sender's own bounded retries), backs
off exponentially with jitter (up to ``max_backoff_s``) while the collector cannot be reached,
and clears the "failing" mark when a drain succeeds -- so the outbox drains itself when the
collector returns. Consent is checked before every drain. On close, what is still queued gets
one more bounded try per batch, in the closing thread, so the state is final when ``close``
returns (a short-lived process does not strand what it queued a moment ago).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from client.outbox import Outbox
from client.sender import Delivery, DeliveryReport, Sender
from client.sentlog import SentLog
from contract.schema import FrictionSignal

__all__ = ["BackgroundDelivery", "DrainResult"]

log = logging.getLogger(__name__)
BATCH = 100


@dataclass(frozen=True, slots=True)
class DrainResult:
    delivered: int = 0
    rejected: int = 0
    #: True when a batch could not be delivered (the collector is down or did not answer).
    failed: bool = False


class BackgroundDelivery:
    def __init__(
        self,
        outbox: Outbox,
        sender: Sender,
        sent_log: SentLog,
        enabled: Callable[[], bool],
        *,
        attempt_s: float = 0.025,
        close_attempt_s: float = 1.0,
        min_backoff_s: float = 0.5,
        max_backoff_s: float = 60.0,
    ) -> None:
        self._outbox = outbox
        self._sender = sender
        self._log = sent_log
        self._enabled = enabled
        self._attempt_s = attempt_s
        self._close_attempt_s = close_attempt_s
        self._min_backoff = min_backoff_s
        self._max_backoff = max_backoff_s
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._failing = threading.Event()
        self._thread: threading.Thread | None = None
        #: When the thread drains next (monotonic seconds); None: nothing scheduled.
        self._due: float | None = None

    def submit(self, signal: FrictionSignal) -> DeliveryReport:
        """Deliver ``signal`` in one bounded try, or queue it durably for the thread."""
        if not self._failing.is_set():
            result = self._sender.attempt([signal], self._attempt_s)
            if result.status is not Delivery.failed:
                return result
            self._failing.set()
        self._outbox.add([signal])
        self._schedule(time.monotonic() + self._min_backoff)
        return DeliveryReport(Delivery.failed, 0)

    def wake(self) -> None:
        """Ask the thread to drain now (it is started on first use)."""
        self._schedule(time.monotonic())

    def close(self, timeout_s: float = 2.0) -> bool:
        """Stop the thread, then give what is queued one bounded try; False when the thread is
        still inside a request (it ends after it; the final try is then skipped)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
            if thread.is_alive():
                return False
        try:
            self._final_drain()
        except Exception as exc:  # telemetry never breaks the host
            log.warning("final delivery failed: %s", type(exc).__name__)
        return True

    def _final_drain(self) -> None:
        if not self._enabled():
            return
        while batch := self._outbox.pending()[:BATCH]:
            result = self._sender.attempt(batch, self._close_attempt_s)
            if result.status is Delivery.failed:
                return
            self._settle(batch, result.status)

    def _settle(self, batch: list[FrictionSignal], status: Delivery) -> None:
        """A batch the collector answered: out of the outbox, into the sent log."""
        self._outbox.remove(s.signal_id for s in batch)
        self._log.append("delivered" if status is Delivery.delivered else "rejected", batch)

    def drain(self) -> DrainResult:
        """Deliver the outbox, oldest first, until it is empty, a batch fails or the delivery
        is being closed."""
        if not self._enabled():
            return DrainResult()
        delivered = rejected = 0
        while not self._stop.is_set():
            batch = self._outbox.pending()[:BATCH]
            if not batch:
                break
            result = self._sender.send(batch)
            if result.status is Delivery.failed:
                return DrainResult(delivered, rejected, failed=True)
            self._settle(batch, result.status)
            if result.status is Delivery.delivered:
                delivered += len(batch)
            else:
                rejected += len(batch)
        return DrainResult(delivered, rejected)

    def _schedule(self, at: float) -> None:
        with self._guard:
            if self._due is None or at < self._due:
                self._due = at
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="lmcp-delivery", daemon=True)
                self._thread.start()
        self._wake.set()

    def _drain_quietly(self) -> DrainResult:
        try:
            return self.drain()
        except Exception as exc:  # telemetry never breaks the host
            log.warning("background delivery failed: %s", type(exc).__name__)
            return DrainResult(failed=True)

    def _run(self) -> None:
        backoff = self._min_backoff
        while True:
            with self._guard:
                due = self._due
            delay = None if due is None else due - time.monotonic()
            if delay is None or delay > 0:
                self._wake.wait(delay)
                self._wake.clear()
            if self._stop.is_set():
                return  # close() gives what is queued its last try
            with self._guard:
                if self._due is None or time.monotonic() < self._due:
                    continue
                self._due = None
            result = self._drain_quietly()
            if result.failed:
                self._failing.set()
                jitter = random.uniform(0.8, 1.2)  # noqa: S311 - jitter, not secrecy
                self._schedule(time.monotonic() + backoff * jitter)
                backoff = min(backoff * 2, self._max_backoff)
            else:
                self._failing.clear()
                backoff = self._min_backoff
