"""Retention deletes the data files no commit names (a writer killed between writing a file
and committing it): raw rows must not outlive retention in the store because no log names
them. A file younger than a write can take is never one of them (it may be about to commit)."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from pathlib import Path

from collector.lake.jobs import ORPHAN_AGE_HOURS, compact, retain
from collector.lake.store import LakeStore
from tests.lake.conftest import DAY, rows

NEXT = DAY + dt.timedelta(days=1)


def _orphan(store: LakeStore, day: dt.date, name: str, age_hours: float) -> Path:
    """A copy of one of ``day``'s data files that no commit names, ``age_hours`` old."""
    folder = Path(store.uri) / f"received_day={day}"
    source = next(folder.glob("*.parquet"))
    orphan = folder / f"part-00000-{name}-c000.snappy.parquet"
    shutil.copy(source, orphan)
    then = time.time() - age_hours * 3600
    os.utime(orphan, (then, then))
    return orphan


def test_retention_deletes_the_files_a_killed_writer_left(folder_store: LakeStore) -> None:
    old, kept = DAY - dt.timedelta(days=40), DAY - dt.timedelta(days=2)
    folder_store.append(rows(20, seed=1, received_day=old))
    folder_store.append(rows(20, seed=2, received_day=kept))
    expired = _orphan(folder_store, old, "killed-old", ORPHAN_AGE_HOURS + 1)
    stray = _orphan(folder_store, kept, "killed-kept", ORPHAN_AGE_HOURS + 1)
    result = retain(folder_store, DAY, 30, grace_hours=0)
    assert not expired.exists() and not stray.exists()
    assert result.files_vacuumed >= 2
    root = Path(folder_store.uri)
    on_disk = {str(p) for p in root.rglob("*.parquet") if "_releases" not in p.parts}
    assert on_disk == {u.removeprefix("file://") for u in folder_store.table().file_uris()}


def test_a_write_in_flight_is_never_deleted(folder_store: LakeStore) -> None:
    folder_store.append(rows(20, seed=1, received_day=DAY))
    compact(folder_store, NEXT)
    in_flight = _orphan(folder_store, DAY, "in-flight", 0)
    retain(folder_store, DAY, 30, grace_hours=0)  # the most eager setting
    assert in_flight.exists()
