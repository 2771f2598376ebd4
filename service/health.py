"""One health flag per store: whether the service can write where it keeps what it accepts.

Whoever writes the store maintains it (the collector's group-commit writer after each flush;
in lake mode the same object, set when the object store refuses a write), and ``/readyz``
reads it: a service that cannot store what it would accept is not ready, so a load balancer
sends its traffic elsewhere. The interface is two calls and one check:

- ``failed(reason)``: the last write failed (``reason`` is a fixed phrase, never a value);
- ``succeeded()``: a write went through;
- ``check()``: the problem now, or ``None``. While a problem is noted, ``check`` asks the
  ``probe`` (a function that raises ``OSError`` while the store still cannot be written) at
  most every ``probe_every_s`` seconds, so readiness comes back on its own once the disk has
  room again, without traffic; while none is noted it probes at the same pace, so a disk that
  fills up between writes is noticed too.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["StoreHealth", "directory_probe"]


class StoreHealth:
    def __init__(
        self, probe: Callable[[], None] | None = None, *, probe_every_s: float = 5.0
    ) -> None:
        self._probe = probe
        self._every = probe_every_s
        self._lock = threading.Lock()
        self._problem: str | None = None
        self._probed_at = -float("inf")

    def failed(self, reason: str) -> None:
        with self._lock:
            self._problem = reason
            self._probed_at = time.monotonic()

    def succeeded(self) -> None:
        with self._lock:
            self._problem = None

    def check(self) -> str | None:
        """The problem, or ``None`` (may run the probe: call it off the event loop)."""
        with self._lock:
            due = self._probe is not None and time.monotonic() - self._probed_at >= self._every
            if not due:
                return self._problem
            self._probed_at = time.monotonic()
        assert self._probe is not None
        try:
            self._probe()
        except OSError:
            with self._lock:
                self._problem = self._problem or "the store cannot be written"
                return self._problem
        with self._lock:
            self._problem = None
            return None


def directory_probe(folder: Path, size: int = 64 * 1024) -> Callable[[], None]:
    """A probe that writes and fsyncs ``size`` bytes in ``folder`` (then removes them)."""

    def probe() -> None:
        path = folder / f".lmcp-write-probe-{os.getpid()}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                view = memoryview(bytes(size))
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        finally:
            try:
                path.unlink()
            except FileNotFoundError:
                pass

    return probe
