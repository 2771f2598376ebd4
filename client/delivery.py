"""Background delivery: telemetry never slows the host.

``report_friction`` hands its signal to :meth:`BackgroundDelivery.submit`, which appends it to
the outbox (durable, O(1)), wakes the delivery thread and -- only when the thread is idle and
the collector was not failing -- waits at most ``wait_s`` for its fate: a collector that answers
at once gives ``delivered``; down, slow or black-holed, the call returns ``failed`` (queued)
within the bound while the thread keeps trying. The thread drains
the whole outbox in batches, backs off exponentially (with jitter, up to ``max_backoff_s``)
while the collector cannot be reached, and resumes at the next wake-up or retry -- so the
outbox drains itself when the collector returns. Consent is checked before every drain.
"""

from __future__ import annotations

import logging
import random
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from client.outbox import Outbox
from client.sender import Delivery, DeliveryReport, Sender
from client.sentlog import SentLog
from contract.schema import FrictionSignal

__all__ = ["BackgroundDelivery", "DrainResult"]

log = logging.getLogger(__name__)
BATCH = 100


@dataclass
class _Waiter:
    done: threading.Event = field(default_factory=threading.Event)
    status: Delivery | None = None


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
        wait_s: float = 0.03,
        min_backoff_s: float = 0.5,
        max_backoff_s: float = 60.0,
    ) -> None:
        self._outbox = outbox
        self._sender = sender
        self._log = sent_log
        self._enabled = enabled
        self._wait_s = wait_s
        self._min_backoff = min_backoff_s
        self._max_backoff = max_backoff_s
        self._waiters: dict[uuid.UUID, _Waiter] = {}
        self._guard = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: Set while a drain runs, and while the last drain failed: a caller does not wait then.
        self._busy = threading.Event()
        self._failing = threading.Event()

    def submit(self, signal: FrictionSignal) -> DeliveryReport:
        """Queue ``signal`` durably, then wait at most ``wait_s`` for the thread to deliver it."""
        waiter = _Waiter()
        with self._guard:
            self._waiters[signal.signal_id] = waiter
        try:
            self._outbox.add([signal])
            hopeless = self._busy.is_set() or self._failing.is_set()
            self.wake()
            if not hopeless:
                waiter.done.wait(self._wait_s)
        finally:
            with self._guard:
                self._waiters.pop(signal.signal_id, None)
                status = waiter.status
        return DeliveryReport(status or Delivery.failed, 0)

    def wake(self) -> None:
        """Ask the thread to drain now (it is started on first use)."""
        with self._guard:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="lmcp-delivery", daemon=True)
                self._thread.start()
        self._wake.set()

    def close(self, timeout_s: float = 2.0) -> bool:
        """Stop the thread; False when it is still inside a request (it ends after it)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
            return not thread.is_alive()
        return True

    def drain(self, *, final: bool = False) -> DrainResult:
        """Deliver the outbox, oldest first, until it is empty or a batch fails (or, unless
        ``final``, the delivery is being closed)."""
        if not self._enabled():
            return DrainResult()
        delivered = rejected = 0
        while final or not self._stop.is_set():
            batch = self._outbox.pending()[:BATCH]
            if not batch:
                break
            result = self._sender.send(batch)
            if result.status is Delivery.failed:
                return DrainResult(delivered, rejected, failed=True)
            self._outbox.remove(s.signal_id for s in batch)
            self._settle(batch, result.status)
            if result.status is Delivery.delivered:
                delivered += len(batch)
            else:
                rejected += len(batch)
        return DrainResult(delivered, rejected)

    def _settle(self, batch: list[FrictionSignal], status: Delivery) -> None:
        """Tell each waiting caller its signal's fate; log the others (a caller logs its own)."""
        unclaimed: list[FrictionSignal] = []
        with self._guard:
            for signal in batch:
                waiter = self._waiters.get(signal.signal_id)
                if waiter is None:
                    unclaimed.append(signal)
                else:
                    waiter.status = status
                    waiter.done.set()
        if unclaimed:
            self._log.append("delivered" if status is Delivery.delivered else "rejected", unclaimed)

    def _drain_quietly(self, *, final: bool = False) -> DrainResult:
        self._busy.set()
        try:
            return self.drain(final=final)
        except Exception as exc:  # telemetry never breaks the host
            log.warning("background delivery failed: %s", type(exc).__name__)
            return DrainResult(failed=True)
        finally:
            self._busy.clear()

    def _run(self) -> None:
        backoff = self._min_backoff
        delay: float | None = None  # None: sleep until woken
        while True:
            self._wake.wait(delay)
            self._wake.clear()
            if self._stop.is_set():
                # Closing: one last drain, unless the collector is known to be failing (a
                # process about to exit should not strand what it queued a moment ago).
                if not self._failing.is_set():
                    self._drain_quietly(final=True)
                return
            result = self._drain_quietly()
            if result.failed:
                self._failing.set()
                delay = backoff * random.uniform(0.8, 1.2)  # noqa: S311 - jitter, not secrecy
                backoff = min(backoff * 2, self._max_backoff)
            else:
                self._failing.clear()
                delay, backoff = None, self._min_backoff
