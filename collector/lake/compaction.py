"""One day's compacted rows as a stream, in bounded memory (``jobs.compact_day`` commits it).

Invariant: compacted rows hold each ``signal_id`` once across the whole table. A day's rows
become compacted only through ``compacted_rows``: each id once (a copy already compacted
wins, then a fixed order of the row's content, never arrival), minus the ids already compacted
in another day (they stay there), ordered by ``signal_id``.

Memory: DuckDB's sort of these wide rows keeps part of them in memory however much it may
spill, so a day too large for ``memory_limit`` is cut into ``2**bits`` ranges of ids (by
their leading 16 bits; ids are random, so the ranges are even): one pass reads the day and
writes each range to a local file of the job's spill folder, then each range is
de-duplicated and sorted on its own and streamed out, range after range, which is the order
of ``signal_id`` over the whole day. A day that fits is read once, directly.

Which other days are read for the ids compacted elsewhere (``may_hold_copies``) is exact, not
a guess; see there.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from collector.lake.files import LakeFile
from collector.lake.store import LAKE_SCHEMA

__all__ = [
    "BATCH_ROWS",
    "ROW_BYTES",
    "compacted_rows",
    "id_range",
    "may_hold_copies",
    "range_bits",
    "range_index",
]

#: Rows per batch handed from DuckDB on (a bounded slice of the sorted day).
BATCH_ROWS = 64 * 1024
#: DuckDB's memory per row of a range it de-duplicates and sorts at once, with room to spare
#: (its sort of these wide rows keeps part of them in memory): a range holds at most
#: budget / ROW_BYTES rows. docs/lake-measurements.md has the measurements behind it.
ROW_BYTES = 1024
_MAX_BITS = 16

_COLUMNS = ", ".join(
    "true AS compacted" if n == "compacted" else f'"{n}"' for n in LAKE_SCHEMA.names
)
_CONTENT = ", ".join(f'"{n}"' for n in LAKE_SCHEMA.names if n not in ("signal_id", "compacted"))


def range_bits(rows: int, memory_bytes: int) -> int:
    """How many bits of the ids cut a day of ``rows`` rows into ranges that each fit in
    ``memory_bytes`` (0: the day fits whole)."""
    bits = 0
    while bits < _MAX_BITS and rows * ROW_BYTES > memory_bytes << bits:
        bits += 1
    return bits


def id_range(index: int, bits: int) -> tuple[bytes | None, bytes | None]:
    """The ids of range ``index`` of ``2**bits``: (low included, high excluded), as 2-byte
    prefixes (a 16-byte id compares with them byte by byte); None: no bound."""
    if bits == 0:
        return None, None
    shift = 16 - bits
    low = None if index == 0 else (index << shift).to_bytes(2, "big")
    high = None if index == (1 << bits) - 1 else ((index + 1) << shift).to_bytes(2, "big")
    return low, high


def range_index(bits: int) -> str:
    """SQL: the index of the range of ``signal_id`` among ``2**bits`` (``id_range``'s)."""
    return f"CAST('0x' || hex(signal_id)[1:4] AS USMALLINT) >> {16 - bits}"


def _in_range(column: str, low: bytes | None, high: bytes | None) -> str:
    bounds = ["true"]
    if low is not None:
        bounds.append(f"{column} >= unhex('{low.hex()}')")
    if high is not None:
        bounds.append(f"{column} < unhex('{high.hex()}')")
    return " AND ".join(bounds)


def may_hold_copies(
    con: duckdb.DuckDBPyConnection, files: Sequence[LakeFile], day: dt.date
) -> list[LakeFile]:
    """The compacted files of days other than ``day`` that may hold a copy of a row of the
    view ``day_rows``: those received on or after the day before its oldest ``day``.

    Exact: copies of one signal carry its ``day`` (a retry resends the same signal), and a
    signal is stored only if ``day <= received_day + 1`` (``collector.ingest.check_days``
    refuses it otherwise, before the flush that sets ``received_day``, which is that day or
    later), so every copy of a row whose ``day`` is ``d`` was received on ``d - 1`` or later.
    """
    oldest = con.execute("SELECT min(day) FROM day_rows").fetchall()[0][0]
    first = None if oldest is None else oldest - dt.timedelta(days=1)
    return [f for f in files if f.compacted and f.day != day and (first is None or f.day >= first)]


def _split(con: duckdb.DuckDBPyConnection, bits: int, folder: Path) -> dict[int, Path]:
    """``day_rows`` written to one local Parquet file per range of ids, in one pass."""
    scan = con.sql(f"SELECT *, {range_index(bits)} AS _range FROM day_rows")
    scan = scan.to_arrow_reader(BATCH_ROWS)
    writers: dict[int, pq.ParquetWriter] = {}
    paths: dict[int, Path] = {}
    try:
        for batch in scan:
            batch = batch.take(pc.sort_indices(batch.column("_range")))
            start = 0
            for item in pc.value_counts(batch.column("_range")):
                index, count = int(item["values"].as_py()), int(item["counts"].as_py())
                part = batch.slice(start, count).drop_columns(["_range"])
                start += count
                if index not in writers:
                    paths[index] = folder / f"range-{index}.parquet"
                    writers[index] = pq.ParquetWriter(paths[index], part.schema)
                writers[index].write_batch(part)
    finally:
        for writer in writers.values():
            writer.close()
    return paths


def compacted_rows(
    con: duckdb.DuckDBPyConnection, rows: int, memory_bytes: int, spill: Path
) -> pa.RecordBatchReader:
    """The compacted rows of the view ``day_rows`` (``rows`` rows stored), minus the ids of
    the view ``elsewhere``, as ``LAKE_SCHEMA`` batches in ``signal_id`` order. Past what
    ``memory_bytes`` sorts at once, the day is first cut into ranges of ids under ``spill``
    (a folder that must outlive the stream)."""
    bits = range_bits(rows, memory_bytes)
    sources = {0: "day_rows"}
    if bits:
        sources = {
            i: "read_parquet('" + str(p).replace("'", "''") + "')"
            for i, p in _split(con, bits, spill).items()
        }

    def batches() -> Iterator[pa.RecordBatch]:
        for index in sorted(sources):
            low, high = id_range(index, bits)
            # Each id once: a copy already compacted wins, then a fixed order of the row's
            # content (never arrival); ids compacted in another day stay there.
            part = con.sql(
                f"""
                SELECT {_COLUMNS} FROM {sources[index]} AS d
                WHERE NOT EXISTS (
                    SELECT 1 FROM elsewhere AS e
                    WHERE e.signal_id = d.signal_id AND {_in_range("e.signal_id", low, high)}
                )
                QUALIFY row_number() OVER (
                    PARTITION BY signal_id ORDER BY compacted DESC, hash({_CONTENT})
                ) = 1
                ORDER BY signal_id
                """
            ).to_arrow_reader(BATCH_ROWS)
            yield from part.cast(LAKE_SCHEMA)

    return pa.RecordBatchReader.from_batches(LAKE_SCHEMA, batches())
