"""The collector's side of the lake: settings to store, and one flush to one commit.

``LakeSink.write`` is what the group-commit writer calls in lake mode instead of its INSERT:
the flush's requests de-duplicated (the first occurrence wins, as in the file), shaped into
lake rows, appended in ONE Delta commit; the per-request results are returned only after the
commit. An id stored by an earlier flush, or by another collector,
is not looked up (that would be a read per flush across collectors): it counts as accepted,
and reads and compaction de-duplicate it.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from collector.lake.store import LakeStore, lake_rows
from collector.rows import rows_from_models
from collector.settings import CollectorSettings

if TYPE_CHECKING:
    from collector.writer import FlushWork, WriteResult

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

    def write(self, work: FlushWork, received_day: dt.date) -> list[WriteResult]:
        """Append one flush in one commit; one result per request, after the commit."""
        from collector.writer import LARGE_FLUSH_ROWS, BodyOnly, FlushPlan, WriteResult

        bodies = [b for b in work.bodies if b is not None]
        large = work.rows >= LARGE_FLUSH_ROWS or any(isinstance(b, BodyOnly) for b in work.batches)
        if large and len(bodies) == len(work.bodies):
            counts = [len(batch) for batch in work.batches]
            table = self._from_bodies(bodies, counts, received_day)
            if table is not None:
                self.store.append(table)
                return [WriteResult(count, 0) for count in counts]
        plan = FlushPlan.of(work.batches)
        unique = [s for batch in work.batches for s in batch]
        if plan.keep is not None:
            unique = [s for s, kept in zip(unique, plan.keep, strict=True) if kept]
        if unique:
            self.store.append(lake_rows(rows_from_models(unique), received_day))
        return plan.results(None)

    def _from_bodies(
        self, bodies: list[bytes], counts: list[int], received_day: dt.date
    ) -> pa.Table | None:
        from collector.db import apply_migrations
        from collector.lake.load import lake_rows_from_duckdb
        from collector.writer import insert_bodies

        if self._shaper is None:
            self._shaper = duckdb.connect(":memory:", config={"threads": 1})
            apply_migrations(self._shaper)
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
