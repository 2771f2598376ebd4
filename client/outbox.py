"""The outbox: signals that could not be delivered yet, durable and bounded.

One JSON document (``outbox.json`` under ``LMCP_HOME``) replaced atomically, guarded by an
inter-process lock, holding at most ``MAX_SIGNALS`` signals (the oldest are dropped first).
A file that cannot be parsed is set aside as ``outbox.corrupt.json`` and the outbox starts
empty: a damaged outbox never crashes the host. Entries are re-validated with the wire model on
load, so the outbox can only ever send what the contract allows; an entry queued by an older
release (signal v1) is mapped to the current version (``contract.schema.upgrade``).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from client._files import atomic_write_bytes, file_lock
from client.paths import LmcpHome
from contract.schema import AnySignal, FrictionSignal, upgrade

__all__ = ["FORMAT_VERSION", "MAX_SIGNALS", "Outbox", "OutboxAdd"]

log = logging.getLogger(__name__)
MAX_SIGNALS = 1000
FORMAT_VERSION = 1
_ENTRY: TypeAdapter[AnySignal] = TypeAdapter(AnySignal)


@dataclass(frozen=True, slots=True)
class OutboxAdd:
    queued: int
    dropped_oldest: int


class Outbox:
    def __init__(self, home: LmcpHome, *, max_signals: int = MAX_SIGNALS) -> None:
        self._path = home.outbox
        self._lock = home.root / ".outbox.lock"
        self._max = max_signals

    @property
    def path(self) -> Path:
        return self._path

    def add(self, signals: Sequence[FrictionSignal]) -> OutboxAdd:
        with file_lock(self._lock):
            kept = self._load()
            known = {s.signal_id for s in kept}
            kept.extend(s for s in signals if s.signal_id not in known)
            dropped = max(0, len(kept) - self._max)
            kept = kept[dropped:]
            self._store(kept)
        return OutboxAdd(queued=len(kept), dropped_oldest=dropped)

    def pending(self) -> list[FrictionSignal]:
        with file_lock(self._lock):
            return self._load()

    def remove(self, signal_ids: Iterable[object]) -> None:
        gone = set(signal_ids)
        with file_lock(self._lock):
            kept = [s for s in self._load() if s.signal_id not in gone]
            self._store(kept)

    def purge(self) -> None:
        """Forget everything queued (turning signals off calls this)."""
        with file_lock(self._lock):
            for path in (self._path, self._path.with_name("outbox.corrupt.json")):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass

    def __len__(self) -> int:
        return len(self.pending())

    def _load(self) -> list[FrictionSignal]:
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError:
            log.warning("outbox unreadable; starting empty")
            return []
        try:
            doc = json.loads(raw)
            entries = doc["signals"]
            if doc.get("version") != FORMAT_VERSION or not isinstance(entries, list):
                raise ValueError("unknown outbox format")
        except (ValueError, KeyError, TypeError):
            self._set_aside()
            return []
        signals: list[FrictionSignal] = []
        invalid = 0
        for entry in entries:
            try:
                signals.append(upgrade(_ENTRY.validate_json(json.dumps(entry))))
            except (ValidationError, TypeError, ValueError):
                invalid += 1
        if invalid:
            log.warning("outbox: dropped %d entries that are not valid signals", invalid)
        return signals

    def _store(self, signals: list[FrictionSignal]) -> None:
        if not signals:
            try:
                self._path.unlink()
            except FileNotFoundError:
                pass
            return
        body = b",".join(s.model_dump_json().encode() for s in signals)
        atomic_write_bytes(
            self._path, b'{"version":%d,"signals":[' % FORMAT_VERSION + body + b"]}\n"
        )

    def _set_aside(self) -> None:
        log.warning("outbox is damaged; set aside and starting empty")
        try:
            os.replace(self._path, self._path.with_name("outbox.corrupt.json"))
        except OSError:
            pass
