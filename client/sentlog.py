"""The local log of what was sent: ``lmcp signals log`` reads it. Bounded, JSON lines.

It holds exactly the signals as they went (or would go) over the wire -- they carry no values --
and what became of them: ``delivered``, ``rejected`` (a 4xx from the collector: dropped, counted
here), ``expired`` (too late for its week's release: dropped, never sent or refused for its day)
or ``local`` (local-only mode: kept here, never uploaded; ``lmcp signals off`` forgets them).
The contribution bound counts these records with its own file (``client/contributions.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from client._files import atomic_write_bytes, file_lock
from client.paths import LmcpHome
from contract.schema import FrictionSignal

__all__ = ["MAX_ENTRIES", "SentLog"]

MAX_ENTRIES = 200
Status = Literal["delivered", "rejected", "expired", "local"]


@dataclass(frozen=True, slots=True)
class SentEntry:
    status: Status
    signal: dict[str, Any]


class SentLog:
    def __init__(self, home: LmcpHome, *, max_entries: int = MAX_ENTRIES) -> None:
        self._path = home.sent_log
        self._lock = home.root / ".sent.lock"
        self._max = max_entries

    def append(self, status: Status, signals: Iterable[FrictionSignal]) -> None:
        lines = [
            b'{"status":"%s","signal":%s}\n' % (status.encode(), s.model_dump_json().encode())
            for s in signals
        ]
        if not lines:
            return
        with file_lock(self._lock):
            self._path.parent.mkdir(parents=True, exist_ok=True)
            with open(self._path, "ab") as handle:
                handle.writelines(lines)
            # Trim lazily: rewrite only when the file holds twice the bound.
            with open(self._path, "rb") as handle:
                existing = handle.readlines()
            if len(existing) > 2 * self._max:
                atomic_write_bytes(self._path, b"".join(existing[-self._max :]))

    def entries(self, limit: int | None = None) -> list[SentEntry]:
        try:
            raw = self._path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        out: list[SentEntry] = []
        for line in raw[-self._max :]:
            try:
                doc = json.loads(line)
                out.append(SentEntry(doc["status"], doc["signal"]))
            except (ValueError, KeyError, TypeError):
                continue
        return out[-limit:] if limit else out

    def forget_local(self) -> None:
        """Drop every ``local`` entry (signals kept in local-only mode, never uploaded)."""
        with file_lock(self._lock):
            try:
                lines = self._path.read_bytes().splitlines(keepends=True)
            except FileNotFoundError:
                return
            kept = [line for line in lines if not line.startswith(b'{"status":"local"')]
            if len(kept) != len(lines):
                atomic_write_bytes(self._path, b"".join(kept))

    def count(self, status: Status) -> int:
        return sum(1 for e in self.entries() if e.status == status)
