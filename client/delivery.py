"""Background delivery: telemetry never slows the host.

``report_friction`` hands its signal to :meth:`BackgroundDelivery.submit`:
- unless the collector is known to be failing, ONE POST is tried in the call, every phase
  bounded by ``attempt_s`` (refused: at once; black-holed or slow: after ``attempt_s``);
- if it did not arrive, the signal is appended to the outbox (durable, O(1)) and the delivery
  thread is scheduled to retry after a back-off, so the call returns at once.
The thread drains the whole outbox in batches (with the sender's own bounded retries), backs
off exponentially with jitter (up to ``max_backoff_s``) while the collector cannot be reached,
and clears the "failing" mark when a drain succeeds -- so the outbox drains itself when the
collector returns. Consent is checked before every drain, and the sender asks it again right
before each POST (``client.sender``); a signal queued while the user was turning signals off
is purged as ``off`` purges (``submit``). On close, what is still queued gets
one more drain of one bounded try per batch, in the closing thread, so the state is final when
``close`` returns (a short-lived process does not strand what it queued a moment ago).

Every drain is :func:`drain_outbox` (the thread's, the one on close, ``lmcp signals flush``):
batches oldest first, until the outbox is empty, a batch fails, or the drain is stopped.

A queued signal too late for its week's release (``client.sender.expired_by_clock``, or a 422
``day_out_of_window``) is dropped from the outbox and logged ``expired``, even while the
collector cannot be reached: a 30-day backlog sends only the days still counted.
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

__all__ = ["BackgroundDelivery", "DrainResult", "drain_outbox", "queue_while_allowed", "settle"]

log = logging.getLogger(__name__)
BATCH = 100


@dataclass(frozen=True, slots=True)
class DrainResult:
    delivered: int = 0
    rejected: int = 0
    #: True when a batch could not be delivered (the collector is down or did not answer).
    failed: bool = False
    #: Signals dropped as too late for their week's release (never sent).
    expired: int = 0


def settle(
    outbox: Outbox, sent_log: SentLog, batch: list[FrictionSignal], report: DeliveryReport
) -> DrainResult:
    """What ``report`` settled of ``batch``: out of the outbox, into the sent log. The expired
    signals always go; the others only when the collector answered (not ``failed``)."""
    late = set(report.expired)
    expired = [s for s in batch if s.signal_id in late]
    kept = report.status is Delivery.failed or report.status is Delivery.withdrawn
    rest = [] if kept else [s for s in batch if s.signal_id not in late]
    # Logged before they leave the outbox: the contribution bound counts both, so a signal
    # is never in neither (a crash between leaves it in both: the collector drops the repeat).
    sent_log.append("expired", expired)
    delivered = report.status is Delivery.delivered
    sent_log.append("delivered" if delivered else "rejected", rest)
    if expired or rest:
        outbox.remove(s.signal_id for s in (*expired, *rest))
    if delivered:
        return DrainResult(delivered=len(rest), expired=len(expired))
    return DrainResult(
        rejected=len(rest), expired=len(expired), failed=report.status is Delivery.failed
    )


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
        """Deliver ``signal`` in one bounded try, or queue it durably for the thread
        (``withdrawn``: signals were turned off meanwhile, and it is neither sent nor kept)."""
        if not self._failing.is_set():
            result = self._sender.attempt([signal], self._attempt_s)
            if result.status is not Delivery.failed:
                return result
            if result.attempts:  # not when only another POST of this home was under way
                self._failing.set()
        if not queue_while_allowed(self._outbox, [signal], self._enabled):
            return DeliveryReport(Delivery.withdrawn, 0)
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
        if self._enabled():
            drain_outbox(self._outbox, self._sender, self._log, attempt_s=self._close_attempt_s)

    def drain(self) -> DrainResult:
        """Deliver the outbox, oldest first, until it is empty, a batch fails or the delivery
        is being closed (the too late signals of a failed batch are dropped all the same)."""
        if not self._enabled():
            return DrainResult()
        return drain_outbox(self._outbox, self._sender, self._log, self._stop.is_set)

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


def queue_while_allowed(
    outbox: Outbox, signals: list[FrictionSignal], allowed: Callable[[], bool]
) -> bool:
    """Queue ``signals`` unless signals stopped being allowed meanwhile; whether they are kept.

    Asked AFTER the append: the user's choice is recorded before the outbox is purged
    (``ConsentGate.set_mode``), so an append that lands after that purge sees the choice here
    and purges again -- what the purge would have done -- and one that lands before it is
    purged by it."""
    outbox.add(signals)
    if allowed():
        return True
    outbox.purge()
    return False


def drain_outbox(
    outbox: Outbox,
    sender: Sender,
    sent_log: SentLog,
    stop: Callable[[], bool] = lambda: False,
    *,
    attempt_s: float | None = None,
) -> DrainResult:
    """Send the outbox in batches, oldest first, until it is empty, a batch fails or ``stop()``.

    Each batch gets the sender's bounded retries, or with ``attempt_s`` one POST bounded by it
    (the last try on close). The too late signals of a failed batch are dropped all the same.
    """
    delivered = rejected = expired = 0
    while not stop():
        batch = outbox.pending()[:BATCH]
        if not batch:
            break
        report = sender.send(batch) if attempt_s is None else sender.attempt(batch, attempt_s)
        done = settle(outbox, sent_log, batch, report)
        if report.status is Delivery.withdrawn:  # signals turned off: the rest is not sent
            break
        delivered += done.delivered
        rejected += done.rejected
        expired += done.expired
        if done.failed:
            return DrainResult(delivered, rejected, failed=True, expired=expired)
    return DrainResult(delivered, rejected, expired=expired)
