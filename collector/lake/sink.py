"""The collector's side of the lake: settings to store, and one flush to one commit.

``LakeSink`` is the writer's ``SignalStore`` in lake mode (``collector.store``): the flush's
requests de-duplicated (the first occurrence wins, as in the file), shaped into lake rows,
appended in ONE Delta commit; the per-request results are returned only after the commit.
An id stored by an earlier flush, or by another collector, is not looked up (that would be a
read per flush across collectors): it counts as accepted, and reads and compaction de-duplicate
it.
"""

from __future__ import annotations

import datetime as dt

import duckdb
import pyarrow as pa

from collector.db import migrate
from collector.flush import LARGE_FLUSH_ROWS, Flush, WriteResult
from collector.lake.store import LakeStore, lake_rows
from collector.settings import CollectorSettings
from collector.store import StoreOpener, TakeFlush, Written, insert_bodies, write_when_taken

__all__ = ["LakeSink", "lake_from_settings", "storage_options"]


def storage_options(settings: CollectorSettings) -> dict[str, str]:
    """delta-rs's object-store options from the ``lake_s3_*`` settings (S3 URIs only)."""
    if not (settings.lake_uri or "").startswith("s3://"):
        return {}
    options = {"AWS_REGION": settings.lake_s3_region}
    if settings.lake_s3_endpoint:
        options["AWS_ENDPOINT_URL"] = settings.lake_s3_endpoint
    if settings.lake_s3_key_id:
        options["AWS_ACCESS_KEY_ID"] = settings.lake_s3_key_id
    if settings.lake_s3_secret is not None:
        options["AWS_SECRET_ACCESS_KEY"] = settings.lake_s3_secret.get_secret_value()
    if settings.lake_s3_allow_http:
        options["AWS_ALLOW_HTTP"] = "true"
    return options


def lake_from_settings(settings: CollectorSettings, uri: str | None = None) -> LakeStore:
    """The store of ``uri`` (default: ``lake_uri``), with the S3 settings."""
    target = uri or settings.lake_uri
    if not target:
        raise ValueError("no lake URI (--lake or LMCP_COLLECTOR_LAKE_URI)")
    return LakeStore(target, storage_options(settings.model_copy(update={"lake_uri": target})))


class LakeSink:
    """The writer's lake end: one flush in, one commit out (the writer thread only).

    A large flush (or one holding a request kept as its body) is shaped by DuckDB from the
    very bodies the collector validated, as the file mode's INSERT does
    (``collector/sql/insert_bodies.sql``), into a private in-memory table, then read out as
    lake rows: no model is validated again and no Python runs per row. A flush DuckDB
    refuses (an id repeated within it, a body it would read otherwise than pydantic), and a
    small one, is shaped from the models.
    """

    def __init__(self, store: LakeStore) -> None:
        self.store = store
        self._shaper: duckdb.DuckDBPyConnection | None = None

    @classmethod
    def opener(cls, store: LakeStore) -> StoreOpener:
        """The writer's ``open_store`` for ``store`` (created beforehand: ``store.create()``)."""
        return lambda: cls(store)

    def write(self, flush: Flush, received_day: dt.date) -> Written:
        """Append one flush in one commit; one result per request, after the commit."""
        bodies = [b for b in flush.bodies if b is not None]
        large = flush.rows >= LARGE_FLUSH_ROWS
        tried = large and len(bodies) == len(flush.bodies)
        if tried:
            counts = [len(batch) for batch in flush.batches]
            table = self._from_bodies(bodies, counts, received_day)
            if table is not None:
                self.store.append(table)
                return Written([WriteResult(count, 0) for count in counts], False)
        plan, rows = flush.planned()
        if rows.num_rows:
            self.store.append(lake_rows(rows, received_day))
        return Written(plan.results(None), tried)

    def write_streamed(self, received_day: dt.date, take: TakeFlush) -> Written:
        return write_when_taken(self, received_day, take)

    def close(self) -> None:
        if self._shaper is not None:
            self._shaper.close()
            self._shaper = None

    def _from_bodies(
        self, bodies: list[bytes], counts: list[int], received_day: dt.date
    ) -> pa.Table | None:
        from collector.lake.load import lake_rows_from_duckdb

        if self._shaper is None:
            self._shaper = duckdb.connect(":memory:", config={"threads": 1})
            migrate(self._shaper)
        con = self._shaper
        try:
            insert_bodies(con, bodies, counts, received_day)
        except _REFUSED:  # never logged: a refusal may quote the body
            return None
        try:
            return lake_rows_from_duckdb(con)
        finally:
            con.execute("DELETE FROM signals")


#: What DuckDB raises when it will not shape a flush's bodies exactly as validated.
_REFUSED = (duckdb.ConstraintException, duckdb.InvalidInputException, duckdb.ConversionException)
