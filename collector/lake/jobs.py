"""The lake's daily jobs: compact each closed day once, and retention. Safe beside writers.

``compact_day`` rewrites one ``received_day`` partition in ONE commit (an overwrite of the
day's files, ``collector.lake.rewrite``): its rows de-duplicated by ``signal_id``, minus ids
already compacted in another day, ordered by ``signal_id`` (independent of arrival), written
as few large files, marked ``compacted``.
Invariant: compacted rows hold each ``signal_id`` once across the whole table (reads rely on
it; ``collector.lake.compaction`` keeps it, reading only the days that may hold a copy). The
day streams through in bounded memory (``memory_limit``, spilling to a temporary folder). It
commits against the version it read, only if the day's files are still those it read: if a
writer appended to that day meanwhile, it raises ``CommitFailedError`` and nothing changes, so
no row is lost; the next run tries again (an append after that look is not removed either:
the commit removes only the files read). A day whose files are all compacted is skipped.

``fold_open_day`` compacts the open (today's) day as it grows, without stopping the
collectors: the day's files not compacted yet become compacted files (each id once, minus the
ids compacted in this day or another), in one commit that removes exactly the files it read,
so appends landing meanwhile neither conflict nor get lost. Run hourly, it keeps today's files
bounded (the files of an hour, plus one or a few per hour folded); the nightly
``compact_day`` then rewrites the closed day as a whole.

``compact`` runs them and, when it loses a race (another job's commit, a writer's append to a
closed day), waits and tries the day again instead of failing; it ends by deleting the log
entries the table's log retention expired (one full listing of the log, hourly, never on a
collector's path).

``retain`` deletes the rows outside the retention window (the collector's rule: ``day`` or
``received_day`` before the first kept day), touching closed days only so it never conflicts
with today's appends, then VACUUMs: the removed files are deleted from the store, not only
unlinked from the log, and so are orphans (files no commit names, left by a writer killed
before its commit) once older than ``ORPHAN_AGE_HOURS``, never a file a writer has written
and is about to commit.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from deltalake import CommitProperties
from deltalake.exceptions import CommitFailedError

from collector.lake.bounded import (
    DEFAULT_MEMORY_LIMIT,
    bounded_connection,
    memory_bytes,
    spill_folder,
)
from collector.lake.compaction import compacted_rows, may_hold_copies
from collector.lake.files import PARTITION, lake_files
from collector.lake.releases import LakeReleases
from collector.lake.rewrite import fold_into_day, replace_day
from collector.lake.steward import LakeAudit
from collector.lake.store import LAKE_SCHEMA, MAX_COMMIT_RETRIES, LakeStore
from collector.retention import first_kept_day

__all__ = ["CompactResult", "RetainResult", "compact", "compact_day", "fold_open_day", "retain"]

log = logging.getLogger("collector")
#: Tries of one day when a concurrent commit beats the job, waiting 1, 2, 4, ... s between.
COMPACT_ATTEMPTS = 6

#: Age after which a data file that no commit names is an orphan, not a write in flight.
ORPHAN_AGE_HOURS = 1
#: Target size of a compacted file: a day of 100 M signals is a few dozen files.
TARGET_FILE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CompactResult:
    day: dt.date
    rows_before: int
    rows_after: int
    files_before: int
    files_after: int


@dataclass(frozen=True, slots=True)
class RetainResult:
    first_kept: dt.date
    rows_deleted: int
    files_vacuumed: int
    released_rows_deleted: int = 0
    release_files_vacuumed: int = 0


def compact_day(
    store: LakeStore,
    day: dt.date,
    *,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    before_commit: Callable[[], object] | None = None,
) -> CompactResult:
    """Rewrite ``day`` once, de-duplicated and ordered; raise if a writer changed it meanwhile.

    Memory stays bounded whatever the day holds: DuckDB holds at most ``memory_limit`` and
    spills past it to a temporary folder (``collector.lake.bounded``), a day larger than
    that is sorted range of ids by range, and the rows stream from the day's files into the
    writer (``collector.lake.compaction``). ``before_commit`` runs once the files to read are
    fixed, before the rows are written and committed (tests race a writer there).
    """
    table = store.table()  # the version read: the commit is checked against it
    files = lake_files(table)
    reader = store.reader(table)
    mine = [f for f in files if f.day == day]
    with bounded_connection(memory_limit) as con:
        reader.scan(con, "day_rows", mine, LAKE_SCHEMA)
        reader.scan(con, "elsewhere", may_hold_copies(con, files, day), LAKE_SCHEMA)
        count = sum(f.rows for f in mine)
        rows = compacted_rows(con, count, memory_bytes(memory_limit), spill_folder(con))
        if before_commit is not None:
            before_commit()
        replace_day(
            table,
            store.table,
            reader,
            day,
            rows,
            target_bytes=TARGET_FILE_BYTES,
            commit_properties=CommitProperties(
                custom_metadata={"lmcp.job": "compact", "lmcp.day": day.isoformat()},
                max_commit_retries=MAX_COMMIT_RETRIES,
            ),
        )
    table.update_incremental()  # to the version just committed (or a later one)
    after = [f for f in lake_files(table) if f.day == day]
    return CompactResult(day, count, sum(f.rows for f in after), len(mine), len(after))


def fold_open_day(
    store: LakeStore,
    day: dt.date,
    *,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    before_commit: Callable[[], object] | None = None,
) -> CompactResult:
    """Fold the files of ``day`` not compacted yet into compacted files, beside the
    collectors' appends (see the module's docstring); ``before_commit`` as in
    ``compact_day``."""
    table = store.table()
    files = lake_files(table)
    reader = store.reader(table)
    mine = [f for f in files if f.day == day]
    folded = [f for f in mine if not f.compacted]
    count = sum(f.rows for f in folded)
    if not folded:
        return CompactResult(day, 0, 0, len(mine), len(mine))
    with bounded_connection(memory_limit) as con:
        reader.scan(con, "day_rows", folded, LAKE_SCHEMA)
        kept = [f for f in mine if f.compacted] + may_hold_copies(con, files, day)
        reader.scan(con, "elsewhere", kept, LAKE_SCHEMA)
        rows = compacted_rows(con, count, memory_bytes(memory_limit), spill_folder(con))
        if before_commit is not None:
            before_commit()
        fold_into_day(
            table,
            reader,
            day,
            rows,
            folded,
            target_bytes=TARGET_FILE_BYTES,
            commit_properties=CommitProperties(
                custom_metadata={"lmcp.job": "fold", "lmcp.day": day.isoformat()},
                max_commit_retries=MAX_COMMIT_RETRIES,
            ),
        )
    table.update_incremental()
    store.maintain(table, int(table.version()))
    after = [f for f in lake_files(table) if f.day == day]
    return CompactResult(
        day, count, sum(f.rows for f in after if f.compacted), len(mine), len(after)
    )


def compact(
    store: LakeStore,
    today: dt.date,
    *,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    open_day: bool = False,
    attempts: int = COMPACT_ATTEMPTS,
    sleep: Callable[[float], None] = time.sleep,
    before_commit: Callable[[], object] | None = None,
) -> list[CompactResult]:
    """Compact every closed day (before ``today``, UTC) not compacted yet, oldest first;
    with ``open_day``, fold today's new files too. A day whose commit loses a race is tried
    again after a wait, up to ``attempts`` times (then left for the next run, logged). Ends
    with the log's clean-up. ``before_commit``: as in ``compact_day``, for every try."""
    days = [d.day for d in store.days() if d.day < today and not d.compacted]
    jobs: list[tuple[Callable[..., CompactResult], dt.date]] = [(compact_day, d) for d in days]
    if open_day:
        jobs.append((fold_open_day, today))
    results = []
    for job, day in jobs:
        for attempt in range(attempts):
            try:
                results.append(
                    job(store, day, memory_limit=memory_limit, before_commit=before_commit)
                )
                break
            except CommitFailedError:
                # Another commit changed what the job read: nothing of this try is stored.
                if attempt == attempts - 1:
                    log.error("compaction lost %d races for a day; the next run retries", attempts)
                    break
                sleep(float(2**attempt))
    store.clean_log()
    audit = LakeAudit(store)
    if audit.exists():
        audit.table().cleanup_metadata()  # the collectors' audit commits leave it to us
    return results


def retain(
    store: LakeStore, today: dt.date, retention_days: int, *, grace_hours: int = 1
) -> RetainResult:
    """Delete what retention says must go, then VACUUM files removed over ``grace_hours`` ago.

    The grace keeps the files a running reader may still be scanning (a query that listed the
    files before a compaction or a delete); 0 deletes every removed file at once.
    """
    kept = first_kept_day(today, retention_days)
    table = store.table()
    metrics = table.delete(
        f"{PARTITION} < '{kept}' OR (day < '{kept}' AND {PARTITION} < '{today}')",
        commit_properties=CommitProperties(custom_metadata={"lmcp.job": "retain"}),
    )
    vacuumed = store.table().vacuum(
        retention_hours=grace_hours, enforce_retention_duration=False, dry_run=False
    )
    # Files no commit ever named (a writer killed between writing and committing) hold raw
    # rows too: the full mode deletes them, only once older than any write takes, so a file
    # a live writer is about to commit is never one of them.
    vacuumed += store.table().vacuum(
        retention_hours=max(grace_hours, ORPHAN_AGE_HOURS),
        enforce_retention_duration=False,
        dry_run=False,
        full=True,
    )
    released, release_files = LakeReleases(store).retain(kept, grace_hours)
    deleted = int(metrics.get("num_deleted_rows", 0) or 0)
    return RetainResult(kept, deleted, len(vacuumed), released, release_files)
