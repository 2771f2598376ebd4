"""The steward's read API: exact count and streamed export of the signals table.

Raw rows and exact counts belong to the steward role (``collector.roles``): off by default,
every read audited (label, day, route, filter) before it is answered. The team role's tokens
are refused here; the team reads differentially private releases (``/v1/triage``) only.

Export streams Arrow record batches from a cursor (its own snapshot, so the writer keeps going)
and encodes each as it comes: Parquet keeps the typed, nested columns; CSV turns ``args`` and
``ring`` into JSON arrays.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import duckdb
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict
from starlette.responses import StreamingResponse

from collector.db import SQL_DIR
from collector.roles import Steward, audit_read, require_steward
from service.db import Database
from service.sql import load_sql

__all__ = ["CountResult", "build_read_router"]

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


def _next_batch(reader: pa.RecordBatchReader) -> pa.RecordBatch | None:
    try:
        return reader.read_next_batch()
    except StopIteration:
        return None


async def _export(db: Database, fmt: str, since: dt.date | None) -> AsyncIterator[bytes]:
    sql = load_sql(SQL_DIR, "export_parquet" if fmt == "parquet" else "export_csv")

    def start(con: duckdb.DuckDBPyConnection) -> tuple[duckdb.DuckDBPyConnection, Any]:
        cursor = con.cursor()
        reader = cursor.sql(sql, params=[since]).to_arrow_reader(EXPORT_BATCH_ROWS)
        return cursor, reader

    cursor, reader = await db.run(start)
    sink = _Chunks()
    writer: pq.ParquetWriter | pa_csv.CSVWriter
    if fmt == "parquet":
        writer = pq.ParquetWriter(sink, reader.schema)
    else:
        writer = pa_csv.CSVWriter(sink, reader.schema)
    try:
        while True:
            batch = await db.run(lambda _con: _next_batch(reader))
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
        await db.run(lambda _con: cursor.close())


def build_read_router(db: Database) -> APIRouter:
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
        await audit_read(db, steward, "/v1/signals/count", {"since": since})
        row = await db.run(
            lambda con: con.execute(load_sql(SQL_DIR, "count_signals"), [since]).fetchone()
        )
        return CountResult(count=int(row[0]) if row else 0)

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
        await audit_read(db, steward, "/v1/signals/export", {"format": format, "since": since})
        filename = f"signals.{format}"
        return StreamingResponse(
            _export(db, format, since),
            media_type=_MEDIA[format],
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    return router
