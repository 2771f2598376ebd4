"""Replace one ``received_day`` partition in ONE commit with rows written in the order given.

``write_deltalake`` does not keep the order of the rows it is handed: it runs the write
through DataFusion, which spreads the incoming batches over one stream per core, so the
batches of a sorted day reach the file interleaved (whatever the day's size past one batch).
The compacted day must be ordered by ``signal_id``, so its files are written here, batch
after batch as they come (a bounded slice of the day in memory), rolling to a new file past
``target_bytes``, and committed as one overwrite of the partition
(``create_write_transaction``) against the version the rows were read from: if the day's
files changed since (a concurrent append), it raises ``CommitFailedError`` and nothing
changes (the files written stay unreferenced, as those of any failed commit).

The log gets each file's row count and statistics for ``compacted`` only (see
``collector.lake.store.TABLE_CONFIGURATION``): never a signal's value.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from collections.abc import Callable, Iterable, Sequence

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from deltalake import CommitProperties, DeltaTable
from deltalake.exceptions import CommitFailedError
from deltalake.transaction import AddAction, RemoveAction

from collector.lake.files import PARTITION, LakeFile, LakeReader, lake_files

__all__ = ["fold_into_day", "replace_day"]


def _file_schema(table: DeltaTable) -> pa.Schema:
    """The table's columns as its data files hold them (the partition column is in the path)."""
    schema = pa.schema(table.schema().to_arrow())
    return schema.remove(schema.get_field_index(PARTITION))


def _day_paths(table: DeltaTable, day: dt.date) -> set[str]:
    return {f.path for f in lake_files(table) if f.day == day}


def _stats(rows: int) -> str:
    return json.dumps(
        {
            "numRecords": rows,
            "minValues": {"compacted": True},
            "maxValues": {"compacted": True},
            "nullCount": {"compacted": 0},
        }
    )


class _DayFiles:
    """Parquet files under one day's folder, written in order, a new one past
    ``target_bytes``; ``actions``: one ``AddAction`` per file closed."""

    def __init__(
        self, reader: LakeReader, day: dt.date, schema: pa.Schema, target_bytes: int
    ) -> None:
        self.reader, self.day, self.schema, self.target_bytes = reader, day, schema, target_bytes
        self.folder = f"{PARTITION}={day.isoformat()}"
        self.actions: list[AddAction | RemoveAction] = []
        self._open: tuple[str, pa.NativeFile, pq.ParquetWriter] | None = None
        self._rows = 0
        if isinstance(reader.filesystem, pafs.LocalFileSystem):  # S3 has no folders
            reader.filesystem.create_dir(f"{reader.root}/{self.folder}", recursive=True)

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if self._open is None:
            name = f"part-{uuid.uuid4()}-c000.snappy.parquet"
            sink = self.reader.filesystem.open_output_stream(
                f"{self.reader.root}/{self.folder}/{name}"
            )
            self._open = (name, sink, pq.ParquetWriter(sink, self.schema))
            self._rows = 0
        _, sink, writer = self._open
        # One row group per batch, flushed to the file at once: memory holds one batch.
        writer.write_table(
            pa.Table.from_batches([batch]).select(self.schema.names).cast(self.schema)
        )
        self._rows += batch.num_rows
        if sink.tell() >= self.target_bytes:
            self.close()

    def close(self) -> None:
        if self._open is None:
            return
        name, sink, writer = self._open
        self._open = None
        writer.close()
        size = sink.tell()
        sink.close()
        self.actions.append(
            AddAction(
                path=f"{self.folder}/{name}",
                size=int(size),
                partition_values={PARTITION: self.day.isoformat()},
                modification_time=int(time.time() * 1000),
                data_change=True,
                stats=_stats(self._rows),
            )
        )


def replace_day(
    table: DeltaTable,
    newest: Callable[[], DeltaTable],
    reader: LakeReader,
    day: dt.date,
    batches: Iterable[pa.RecordBatch],
    *,
    target_bytes: int,
    commit_properties: CommitProperties,
) -> None:
    """Make ``batches`` (``LAKE_SCHEMA`` rows of ``day``, in the order they must keep) the
    whole of the day's partition, in one commit against ``table``'s version; raise
    ``CommitFailedError`` and commit nothing if the day's files changed since (``newest``:
    the table at its newest version)."""
    files = _DayFiles(reader, day, _file_schema(table), target_bytes)
    try:
        for batch in batches:
            files.write(batch)
    finally:
        files.close()  # also on failure: a finished file no commit references, like any other
    # delta-rs checks this commit for concurrent removes, not for files added to the day
    # meanwhile: compare. An append landing after this look is not lost either: the
    # overwrite removes only the files of ``table``'s version, so the day stays open and the
    # next run takes the append in.
    if _day_paths(newest(), day) != _day_paths(table, day):
        raise CommitFailedError(f"the files of {day.isoformat()} changed since they were read")
    table.create_write_transaction(
        files.actions,
        mode="overwrite",
        schema=table.schema(),
        partition_by=[PARTITION],
        partition_filters=[(PARTITION, "=", day.isoformat())],
        commit_properties=commit_properties,
    )


def fold_into_day(
    table: DeltaTable,
    reader: LakeReader,
    day: dt.date,
    batches: Iterable[pa.RecordBatch],
    folded: Sequence[LakeFile],
    *,
    target_bytes: int,
    commit_properties: CommitProperties,
) -> None:
    """Add ``batches`` (compacted rows of ``day``, in order) as new files and remove the
    files ``folded`` they were made from, in ONE commit against ``table``'s version. Files
    appended to the day meanwhile are neither read nor removed, so the commit does not
    conflict with the collectors' appends; a concurrent remove of a folded file (another
    job) makes delta-rs refuse it (``CommitFailedError``) and nothing changes."""
    files = _DayFiles(reader, day, _file_schema(table), target_bytes)
    try:
        for batch in batches:
            files.write(batch)
    finally:
        files.close()
    now = int(time.time() * 1000)
    removes = [
        RemoveAction(
            path=f.path,
            data_change=True,
            deletion_timestamp=now,
            size=f.size,
            partition_values={PARTITION: day.isoformat()},
        )
        for f in folded
    ]
    table.create_write_transaction(
        [*files.actions, *removes],
        mode="append",
        schema=table.schema(),
        partition_by=[PARTITION],
        commit_properties=commit_properties,
    )
