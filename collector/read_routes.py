"""The steward's read API: exact count and streamed export of the signals table.

Raw rows and exact counts belong to the steward role (``collector.roles``): off by default,
every read audited (label, day, route, filter) before it is answered. The team role's tokens
are refused here; the team reads differentially private releases (``/v1/triage``) only.

Where the steward reads from is a ``StewardReads``: the collector's file (``FileReads``), or
in lake mode the lake (``collector.lake.steward.LakeSteward``). Both run the same ``.sql``
files; the routes, the audit-before-answer rule and the encoding are defined here once.

Export streams Arrow record batches (in file mode from a cursor: its own snapshot, so the
writer keeps going) and encodes each as it comes: Parquet keeps the typed, nested columns; CSV
turns ``args`` and ``ring`` into JSON arrays.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal, Protocol

import duckdb
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict
from starlette.background import BackgroundTask
from starlette.responses import StreamingResponse

from collector.db import SQL_DIR
from collector.roles import AuditTrail, DatabaseAudit, Steward, audit_read, require_steward
from service.db import Database
from service.sql import load_sql

__all__ = [
    "EXPORT_BATCH_ROWS",
    "BatchStream",
    "CountResult",
    "FileReads",
    "StewardReads",
    "build_read_router",
    "next_batch",
]

EXPORT_BATCH_ROWS = 50_000
_MEDIA = {"parquet": "application/vnd.apache.parquet", "csv": "text/csv; charset=utf-8"}


_SINCE = "Only signals received on or after this UTC day (YYYY-MM-DD)."


class CountResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    count: int


class _Chunks:
    """A write-only file for pyarrow writers; ``take()`` hands over what was written."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._pos = 0
        self.closed = False

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self._parts.append(chunk)
        self._pos += len(chunk)
        return len(chunk)

    def flush(self) -> None:
        return None

    def tell(self) -> int:
        return self._pos

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


def next_batch(reader: pa.RecordBatchReader) -> pa.RecordBatch | None:
    """The reader's next batch, or None at its end."""
    try:
        return reader.read_next_batch()
    except StopIteration:
        return None


class BatchStream(Protocol):
    """An export's record batches; ``close`` may be called more than once."""

    @property
    def schema(self) -> pa.Schema: ...

    @property
    def closed(self) -> bool: ...

    async def next_batch(self) -> pa.RecordBatch | None: ...

    async def close(self) -> None: ...


class StewardReads(Protocol):
    """Where the steward reads from: a ``signals`` table or view that the collector's ``.sql``
    files query (``$1``: the ``since`` day or NULL), and where its reads are audited."""

    @property
    def audit(self) -> AuditTrail: ...

    async def count(self, sql: str, since: dt.date | None) -> int: ...

    async def stream(self, sql: str, since: dt.date | None) -> BatchStream: ...


class _CursorStream:
    """Batches of a query on a cursor of the collector's connection (the database thread)."""

    def __init__(self, db: Database, cursor: duckdb.DuckDBPyConnection, reader: Any) -> None:
        self._db = db
        self._cursor: duckdb.DuckDBPyConnection | None = cursor
        self._reader = reader

    @property
    def schema(self) -> pa.Schema:
        schema: pa.Schema = self._reader.schema
        return schema

    @property
    def closed(self) -> bool:
        return self._cursor is None

    async def next_batch(self) -> pa.RecordBatch | None:
        return await self._db.run(lambda _con: next_batch(self._reader))

    async def close(self) -> None:
        cursor, self._cursor = self._cursor, None
        if cursor is not None:
            await self._db.run(lambda _con: cursor.close())


class FileReads:
    """The collector's own file: its ``signals`` table and its ``steward_audit`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.audit: AuditTrail = DatabaseAudit(db)

    async def count(self, sql: str, since: dt.date | None) -> int:
        row = await self.db.run(lambda con: con.execute(sql, [since]).fetchone())
        return int(row[0]) if row else 0

    async def stream(self, sql: str, since: dt.date | None) -> BatchStream:
        def start(con: duckdb.DuckDBPyConnection) -> _CursorStream:
            cursor = con.cursor()
            try:
                reader = cursor.sql(sql, params=[since]).to_arrow_reader(EXPORT_BATCH_ROWS)
            except BaseException:
                cursor.close()
                raise
            return _CursorStream(self.db, cursor, reader)

        return await self.db.run(start)


async def _encode(stream: BatchStream, fmt: str) -> AsyncIterator[bytes]:
    """``stream``'s batches as one Parquet or CSV file, chunk by chunk; closes the stream."""
    sink = _Chunks()
    try:
        writer: pq.ParquetWriter | pa_csv.CSVWriter
        if fmt == "parquet":
            writer = pq.ParquetWriter(sink, stream.schema)
        else:
            writer = pa_csv.CSVWriter(sink, stream.schema)
        while True:
            batch = await stream.next_batch()
            if batch is None:
                break
            writer.write_batch(batch)
            chunk = sink.take()
            if chunk:
                yield chunk
        writer.close()
        tail = sink.take()
        if tail:
            yield tail
    finally:
        await stream.close()


def build_read_router(reads: StewardReads) -> APIRouter:
    """The steward's count and export routes over ``reads``."""
    router = APIRouter(tags=["steward"])

    @router.get(
        "/v1/signals/count",
        response_model=CountResult,
        summary="Count stored signals (steward role, audited)",
    )
    async def count_signals(
        steward: Annotated[Steward, Depends(require_steward)],
        since: Annotated[dt.date | None, Query(description=_SINCE)] = None,
    ) -> CountResult:
        await audit_read(reads.audit, steward, "/v1/signals/count", {"since": since})
        return CountResult(count=await reads.count(load_sql(SQL_DIR, "count_signals"), since))

    @router.get(
        "/v1/signals/export",
        summary="Export the signals table, streamed Parquet or CSV (steward role, audited)",
        response_class=StreamingResponse,
        responses={200: {"content": {_MEDIA["parquet"]: {}, "text/csv": {}}}},
    )
    async def export_signals(
        steward: Annotated[Steward, Depends(require_steward)],
        format: Annotated[Literal["parquet", "csv"], Query(description="File format.")] = "parquet",
        since: Annotated[dt.date | None, Query(description=_SINCE)] = None,
    ) -> StreamingResponse:
        await audit_read(
            reads.audit, steward, "/v1/signals/export", {"format": format, "since": since}
        )
        sql = load_sql(SQL_DIR, "export_parquet" if format == "parquet" else "export_csv")
        stream = await reads.stream(sql, since)
        filename = f"signals.{format}"
        # The encoder closes the stream at its end; the background task closes it if the
        # response never started (a client gone before the first chunk).
        return StreamingResponse(
            _encode(stream, format),
            media_type=_MEDIA[format],
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
            background=BackgroundTask(stream.close),
        )

    return router
