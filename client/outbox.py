"""The outbox: signals not delivered yet, durable, bounded, appended in O(1).

``outbox.json`` under ``LMCP_HOME`` holds one signal per line (JSON lines), guarded by an
inter-process lock:
- ``add`` appends the new records and fsyncs them: O(1) in the size of the outbox, and a
  signal acknowledged as queued survives a crash; the records are written whole or not at all
  (a short write or a full disk truncates the file back and raises ``OutboxUnwritable``, so
  nothing is acknowledged that is not on disk);
- a torn last line (a crash mid-append) is ignored, and the next append starts on a new line;
- ``remove`` (after a delivery) and the bound (at most ``MAX_SIGNALS``, oldest dropped first)
  compact the file: rewritten atomically with what is left;
- the previous format (one JSON document ``{"version": 1, "signals": [...]}``) is read and
  rewritten as lines; one that cannot be parsed is set aside as ``outbox.corrupt.json``.
Entries are re-validated with the wire model on load, so the outbox can only ever send what the
contract allows; an entry queued by an older release (signal v1) is mapped to the current
version (``contract.schema.upgrade``).
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from client._files import atomic_write_bytes, file_lock, fsync_dir
from client.paths import LmcpHome

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from contract.schema import AnySignal, FrictionSignal

__all__ = ["MAX_SIGNALS", "Outbox", "OutboxAdd", "OutboxUnwritable"]

log = logging.getLogger(__name__)
MAX_SIGNALS = 1000
_LEGACY_PREFIX = b'{"version"'


class OutboxUnwritable(OSError):
    """Nothing of this add is on disk (the disk is full or failing): never answer "queued"."""


@cache
def _entry() -> TypeAdapter[AnySignal]:
    """The wire model of one entry, built on the first read: an absent or empty outbox (what
    ``lmcp signals status`` reads most) needs no pydantic."""
    from pydantic import TypeAdapter

    from contract.schema import AnySignal

    return TypeAdapter(AnySignal)


@dataclass(frozen=True, slots=True)
class OutboxAdd:
    queued: int
    dropped_oldest: int


class Outbox:
    def __init__(self, home: LmcpHome, *, max_signals: int = MAX_SIGNALS) -> None:
        self._path = home.outbox
        self._lock = home.root / ".outbox.lock"
        self._max = max_signals
        #: The ids in the file, and the file's (inode, size) when this process last saw it: an
        #: append checks them in O(1) and reloads only when another process changed the file.
        self._ids: set[uuid.UUID] = set()
        self._seen: tuple[int, int] | None = None

    @property
    def path(self) -> Path:
        return self._path

    def add(self, signals: Sequence[FrictionSignal]) -> OutboxAdd:
        with file_lock(self._lock):
            ids = self._current_ids()
            fresh: list[FrictionSignal] = []
            for signal in signals:
                if signal.signal_id not in ids:
                    ids.add(signal.signal_id)
                    fresh.append(signal)
            if fresh:
                try:
                    self._append(fresh)
                except OutboxUnwritable:
                    self._seen = None  # the ids noted above are not on disk: read it again
                    raise
            dropped = max(0, len(ids) - self._max)
            if dropped:
                self._store(self._load()[dropped:])
            return OutboxAdd(queued=len(self._ids), dropped_oldest=dropped)

    def pending(self) -> list[FrictionSignal]:
        """Every queued signal, oldest first (a crash between append and compaction may have
        left more than the bound: the oldest beyond it are not offered)."""
        with file_lock(self._lock):
            return self._load()[-self._max :]

    def remove(self, signal_ids: Iterable[object]) -> None:
        gone = set(signal_ids)
        with file_lock(self._lock):
            self._store([s for s in self._load() if s.signal_id not in gone])

    def purge(self) -> None:
        """Forget everything queued (turning signals off calls this)."""
        with file_lock(self._lock):
            for path in (self._path, self._path.with_name("outbox.corrupt.json")):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
            self._ids, self._seen = set(), None

    def __len__(self) -> int:
        return len(self.pending())

    # -- the file ------------------------------------------------------------------------------
    def _stat(self) -> tuple[int, int] | None:
        try:
            info = self._path.stat()
        except FileNotFoundError:
            return None
        return (info.st_ino, info.st_size)

    def _current_ids(self) -> set[uuid.UUID]:
        now = self._stat()
        if now is None:
            self._ids, self._seen = set(), None
        elif now != self._seen:
            self._load()
        return self._ids

    def _append(self, signals: Sequence[FrictionSignal]) -> None:
        records = b"".join(s.model_dump_json().encode() + b"\n" for s in signals)
        try:
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as exc:
            raise OutboxUnwritable(str(exc)) from None
        size = 0
        try:
            size = os.fstat(fd).st_size
            # A torn last line (a crash mid-append) must not swallow the first new record.
            if size and os.pread(fd, 1, size - 1) != b"\n":
                records = b"\n" + records
            view = memoryview(records)
            while view:  # os.write may write less than asked (a full disk): all or nothing
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            if size == 0:
                fsync_dir(self._path.parent)
        except OSError as exc:
            try:
                os.ftruncate(fd, size)  # what was there before, whole
                os.fsync(fd)
            except OSError:
                pass  # a torn last line is ignored on load
            raise OutboxUnwritable(str(exc)) from None
        finally:
            os.close(fd)
            self._seen = self._stat()

    def _load(self) -> list[FrictionSignal]:
        try:
            raw = self._path.read_bytes()
        except FileNotFoundError:
            self._ids, self._seen = set(), None
            return []
        except OSError:
            log.warning("outbox unreadable; starting empty")
            return []
        if raw.startswith(_LEGACY_PREFIX):
            signals = self._load_legacy(raw)
        else:
            lines = raw.split(b"\n")
            complete = lines[:-1]  # the part after the last newline is a torn record, or empty
            signals = self._parse(line for line in complete if line.strip())
        unique: dict[uuid.UUID, FrictionSignal] = {}
        for signal in signals:
            unique.setdefault(signal.signal_id, signal)
        self._ids = set(unique)
        self._seen = self._stat()
        return list(unique.values())

    def _parse(self, lines: Iterable[bytes]) -> list[FrictionSignal]:
        from pydantic import ValidationError

        from contract.schema import upgrade

        signals: list[FrictionSignal] = []
        invalid = 0
        entry = _entry()
        for line in lines:
            try:
                signals.append(upgrade(entry.validate_json(line)))
            except (ValidationError, ValueError):
                invalid += 1
        if invalid:
            log.warning("outbox: dropped %d entries that are not valid signals", invalid)
        return signals

    def _load_legacy(self, raw: bytes) -> list[FrictionSignal]:
        try:
            doc = json.loads(raw)
            entries = doc["signals"]
            if doc.get("version") != 1 or not isinstance(entries, list):
                raise ValueError("unknown outbox format")
        except (ValueError, KeyError, TypeError, AttributeError):
            self._set_aside()
            return []
        signals = self._parse(json.dumps(entry).encode() for entry in entries)
        self._store(signals)
        return signals

    def _store(self, signals: list[FrictionSignal]) -> None:
        """Compaction: the file rewritten atomically with ``signals`` (or removed)."""
        if not signals:
            try:
                self._path.unlink()
            except FileNotFoundError:
                pass
        else:
            body = b"".join(s.model_dump_json().encode() + b"\n" for s in signals)
            atomic_write_bytes(self._path, body)
        self._ids = {s.signal_id for s in signals}
        self._seen = self._stat()

    def _set_aside(self) -> None:
        log.warning("outbox is damaged; set aside and starting empty")
        try:
            os.replace(self._path, self._path.with_name("outbox.corrupt.json"))
        except OSError:
            pass
        self._ids, self._seen = set(), None
