"""The collector's side of the lake: settings to store, and one flush to one commit.

``write_flush`` is what the group-commit writer calls in lake mode instead of its INSERT:
the flush's requests de-duplicated (the first occurrence wins, as in the file), shaped from
the models (``collector.rows``), appended in ONE Delta commit; the per-request results are
returned only after the commit. An id stored by an earlier flush, or by another collector,
is not looked up (that would be a read per flush across collectors): it counts as accepted,
and reads and compaction de-duplicate it.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from collector.lake.store import LakeStore, lake_rows
from collector.rows import rows_from_models
from collector.settings import CollectorSettings

if TYPE_CHECKING:
    from collector.writer import FlushWork, WriteResult

__all__ = ["lake_from_settings", "storage_options", "write_flush"]


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


def write_flush(store: LakeStore, work: FlushWork, received_day: dt.date) -> list[WriteResult]:
    """Append one flush in one commit; one result per request, after the commit."""
    from collector.writer import FlushPlan

    plan = FlushPlan.of(work.batches)
    unique = [s for batch in work.batches for s in batch]
    if plan.keep is not None:
        unique = [s for s, kept in zip(unique, plan.keep, strict=True) if kept]
    if unique:
        store.append(lake_rows(rows_from_models(unique), received_day))
    return plan.results(None)
