"""The lake section of the data catalogue: every stored form of the Delta Lake mode, from a real
lake that the lake's own code writes in a temporary folder at each generation.

- the signals table (``LAKE_SCHEMA``), ``<lake>/_releases`` (``RELEASE_SCHEMA``) and
  ``<lake>/_steward_audit`` (``AUDIT_SCHEMA``): the columns from the schemas, one example row
  each read back from the files the real write paths wrote (a flush's ``LakeStore.append``,
  ``compact_day``, ``release``, ``LakeAudit.append``);
- the Delta log of the three tables (``lake_log.py``), after ``retain`` too;
- the steward's mirror file: the tables ``open_mirrored`` creates, read from a real mirror of
  that lake (the collector's own tables it also holds are the ``duckdb.*`` formats).

Values that differ at each run (random file names, the temporary folder, the mirror's
fingerprint) are shown as fixed examples, so the page is the same at every generation.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lmcp.datacatalogue._exports import arrow_kind, arrow_name
from lmcp.datacatalogue._lake_log import log_format
from lmcp.datacatalogue._model import CatalogueField, DataFormat
from lmcp.datacatalogue._storage import COLUMN_VALUES, table_formats
from lmcp.datacatalogue._text import sample
from lmcp.datacatalogue._wire import example_signal

__all__ = ["MIRROR_TABLES", "example_lake", "lake_formats"]

#: The closed day the example signal is compacted and released in; the next day stays open.
CLOSED_DAY = dt.date(2026, 11, 29)
OPEN_DAY = dt.date(2026, 11, 30)
#: The release job runs on the first day CLOSED_DAY's week is closed (``contract.days``),
#: over a window reaching that week's Monday: one week and its seven days released.
RELEASE_DAY = dt.date(2026, 12, 2)
RELEASE_WINDOW_DAYS = 9
#: A retention run this late deletes every example row (the log's DELETE and VACUUM commits).
EXPIRY_DAY = dt.date(2027, 6, 1)
RETENTION_DAYS = 90
#: The tables ``collector/lake/mirror.py`` creates in the mirror file, beside the collector's.
MIRROR_TABLES = ("lmcp_mirror", "mirror_days", "mirror_open", "mirror_signals")
_OPEN_ID = uuid.UUID("7c4e9a20-5d1b-4f3e-8a62-9b0c1d2e3f40")
#: A collector spool's identity in the log (``collector/lake/spool.py``: made once per file).
_SPOOL_APP_ID = "lmcp-spool-2b7d4f90-6c1e-4a8b-9d3f-5e0a7c1b2d4e"
_AUDIT = ("alice-steward", "/v1/signals/export", "format=parquet&since=2026-11-01")

_SUMMARIES = {
    "lake.signals": "One row per stored copy of a signal, in one Delta table partitioned by "
    "`received_day`: a flush is one commit; a retried batch may be stored twice until "
    "compaction rewrites its closed day once (each id once, in `signal_id` order, "
    "`compacted` true). Readers cast the columns back to the collector's types.",
    "lake.releases": "The released cells, each closed period (a UTC week from its Monday; one "
    "day for `daily`) once for every collector, one commit per first day: per cube a record "
    "row (`key` NULL: kind, scale, threshold, number of cells; the file's `release_periods`) "
    "and every cell of its domain (`release_cells`). Retention deletes them with their "
    "period's first day.",
    "lake.steward_audit": "Every steward read of every lake collector, one commit per read, "
    "appended before the read is served (the file's `steward_audit`). Never deleted by "
    "retention.",
}
_MIRROR_SUMMARIES = {
    "mirror_signals": "The rows of every compacted file of the lake's current version, typed as "
    "the collector's `signals` table: raw rows, in a file readable by its owner only (0600).",
    "mirror_open": "The rows not compacted yet at the last open, each id once, minus the ids "
    "compacted (rebuilt at each open).",
    "mirror_days": "Per copied day, the lake's compacted files it was copied from.",
    "lmcp_mirror": "Which lake the file mirrors, and the shape it was made for (a mirror of "
    "another shape is rebuilt, of another lake refused).",
}
_MIRROR_VALUES = {
    ("mirror_days", "day"): "YYYY-MM-DD (a compacted UTC received day)",
    ("mirror_days", "files"): "the day's compacted data files, relative to the lake",
    ("lmcp_mirror", "lake"): "the lake URI given to `--lake` (a folder or s3://bucket/prefix)",
    ("lmcp_mirror", "fingerprint"): "64 hex digits: sha256 of the mirror's and the lake's shapes",
}
_EXAMPLE_FILE = (
    "received_day=2026-11-29/part-00000-5f0e8c2a-3b1d-4e6f-9a7c-2d4b6e8f0a1c-c000.snappy.parquet"
)
_MIRROR_EXAMPLES: dict[str, dict[str, Any]] = {
    "mirror_days": {
        "day": CLOSED_DAY,
        "files": [_EXAMPLE_FILE],
    },
    "lmcp_mirror": {"lake": "s3://signals/lmcp", "fingerprint": "3a9d…(64 hex digits)"},
}


def example_lake(root: Path) -> tuple[Any, Any]:
    """A lake at ``root / "lake"`` written by the lake's own code: the example signal appended
    and compacted on a closed day, released, one steward read audited, a second signal open;
    and its steward's mirror at ``root / "mirror.duckdb"``. Returns (store, mirror connection);
    ``expire`` then runs retention over it."""
    from collector.lake.jobs import compact_day
    from collector.lake.mirror import open_mirrored
    from collector.lake.releases import release
    from collector.lake.steward import LakeAudit
    from collector.lake.store import LakeStore, lake_rows
    from collector.roles import AuditRow
    from collector.rows import rows_from_models
    from contract.accountant import ReleasePlan

    store = LakeStore(str(root / "lake"))
    store.append(lake_rows(rows_from_models([example_signal()]), CLOSED_DAY))
    compact_day(store, CLOSED_DAY)
    release(store, RELEASE_DAY, ReleasePlan(), retention_days=RELEASE_WINDOW_DAYS)
    LakeAudit(store).append(AuditRow(OPEN_DAY, *_AUDIT))
    later = example_signal().model_copy(update={"signal_id": _OPEN_ID})
    # As a collector's shipper appends: with the spool's transaction (app id, batch number).
    store.append(lake_rows(rows_from_models([later]), OPEN_DAY), txn=(_SPOOL_APP_ID, 1))
    con, _ = open_mirrored(store, root / "mirror.duckdb")
    return store, con


def expire(store: Any) -> None:
    """Retention past every example day: the log's DELETE and VACUUM commits."""
    from collector.lake.jobs import retain

    retain(store, EXPIRY_DAY, RETENTION_DAYS, grace_hours=0)


def _sample(value: Any) -> str:
    if isinstance(value, bytes):
        return f"0x{value.hex()} ({len(value)} bytes)"
    return sample(value)


def _parquet_format(
    key: str, title: str, where: str, schema: Any, row: dict[str, Any], values: dict[str, str],
    notes: dict[str, str],
) -> DataFormat:  # fmt: skip
    return DataFormat(
        key, title, where, _SUMMARIES[key],
        tuple(
            CatalogueField(
                f.name, arrow_kind(f.type), arrow_name(f.type), f.nullable,
                values.get(f.name, ""), _sample(row.get(f.name)), notes.get(f.name, ""),
            )
            for f in schema
        ),
    )  # fmt: skip


def _table_formats(store: Any, stored: Sequence[DataFormat]) -> list[DataFormat]:
    from collector.lake.files import PARTITION, lake_files
    from collector.lake.releases import RELEASE_SCHEMA, LakeReleases
    from collector.lake.steward import AUDIT_SCHEMA, LakeAudit
    from collector.lake.store import LAKE_SCHEMA
    from collector.releases.cubes import CUBES

    table = store.table()
    rows = store.reader(table).read(lake_files(table), LAKE_SCHEMA).to_pylist()
    signal = next(r for r in rows if r["compacted"])
    column = {f.name: f for fmt in stored if fmt.key == "duckdb.signals" for f in fmt.fields}
    values = {name: f.values for name, f in column.items()}
    values["compacted"] = "true, false"
    notes = {
        f.name: f"{arrow_name(f.type)} in the file; read as {column[f.name].type}"
        for f in LAKE_SCHEMA
        if f.name in column and arrow_name(f.type) != "date32[day]"
    }
    notes["signal_id"] = "a UUID4's 16 bytes (Delta has no UUID type); read as UUID"
    notes[PARTITION] = "in the folder name and the log's partitionValues, not in the file"
    # What the real table was created with (collector/lake/store.py TABLE_CONFIGURATION).
    stats = table.metadata().configuration.get("delta.dataSkippingStatsColumns")
    notes["compacted"] = "false as appended, true once compaction rewrote the day" + (
        f"; the only column whose statistics the log keeps (delta.dataSkippingStatsColumns = "
        f"{stats})"
        if stats == "compacted"
        else "; the log keeps statistics of other columns too"
    )
    out = [
        _parquet_format(
            "lake.signals", "Lake: the signals table",
            "<lake>/received_day=YYYY-MM-DD/*.parquet, a Delta table (collector/lake/store.py "
            "LAKE_SCHEMA)", LAKE_SCHEMA, signal, values, notes,
        )
    ]  # fmt: skip
    release_rows = LakeReleases(store).read().to_pylist()
    record = next(r for r in release_rows if r["key"] is None)
    out.append(
        _parquet_format(
            "lake.releases", "Lake: the releases table",
            "<lake>/_releases/day=YYYY-MM-DD/*.parquet, a Delta table (collector/lake/"
            "releases.py RELEASE_SCHEMA)", RELEASE_SCHEMA, record,
            {
                "cube": ", ".join(CUBES),
                "key": "NULL on a record; on a cell, its enum labels, catalogue names or version, "
                "joined by |",
                "n": "a record: its number of cells; a cell: its noisy count (may be "
                "negative; ring3: at or above the threshold)",
                "kind": "week, day (the record's period; NULL on a cell)",
                "scale": "the record's Gaussian standard deviation per cell (NULL on a cell)",
                "threshold": "the record's release threshold (0 for a known domain; NULL on a "
                "cell)",
                "params": "the record's accountant figures: rho, delta, scale, l0, l1, linf, l2 "
                "(NULL on a cell)",
                "day": "YYYY-MM-DD (the first day of a closed period: a Monday for a weekly "
                "cube)",
            },
            {"day": "in the folder name and the log's partitionValues, not in the file"},
        )
    )  # fmt: skip
    audit = LakeAudit(store).rows()[0]
    out.append(
        _parquet_format(
            "lake.steward_audit", "Lake: the steward audit table",
            "<lake>/_steward_audit/read_day=YYYY-MM-DD/*.parquet, a Delta table "
            "(collector/lake/steward.py AUDIT_SCHEMA)", AUDIT_SCHEMA,
            {"read_day": audit.read_day, "label": audit.label, "route": audit.route,
             "filter": audit.filter},
            {f.name: COLUMN_VALUES.get(("steward_audit", f.name), "YYYY-MM-DD (a UTC day)")
             for f in AUDIT_SCHEMA},
            {"read_day": "in the folder name and the log's partitionValues, not in the file"},
        )
    )  # fmt: skip
    return out


def _mirror_formats(con: Any, vocabularies: dict[str, tuple[str, ...]]) -> list[DataFormat]:
    examples: dict[str, dict[str, Any]] = dict(_MIRROR_EXAMPLES)
    for name in ("mirror_signals", "mirror_open"):
        cursor = con.execute(f"SELECT * FROM {name}")
        row = cursor.fetchone()
        if row:
            examples[name] = dict(zip([d[0] for d in cursor.description], row, strict=True))
    others = sorted(
        str(r[0])
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary"
        ).fetchall()
        if str(r[0]) not in MIRROR_TABLES
    )
    summaries = dict(_MIRROR_SUMMARIES)
    summaries["lmcp_mirror"] += (
        " The file also holds the collector's own tables, as catalogued above ("
        + ", ".join(f"`{t}`" for t in others)
        + "; `release_periods` and `release_cells` loaded from `<lake>/_releases`), and the view "
        "`signals` (`mirror_signals` and `mirror_open`)."
    )
    return table_formats(
        con, vocabularies, examples,
        "the steward's mirror file (`--mirror FILE`, collector/lake/mirror.py)",
        skip=frozenset(others), prefix="mirror", summaries=summaries, values=_MIRROR_VALUES,
        title="Mirror: DuckDB table",
    )  # fmt: skip


def lake_formats(
    stored: Sequence[DataFormat], vocabularies: dict[str, tuple[str, ...]]
) -> list[DataFormat]:
    """The lake's tables, their Delta log and the steward's mirror, from a real example lake."""
    with tempfile.TemporaryDirectory(prefix="lmcp-catalogue-") as folder:
        root = Path(folder)
        store, con = example_lake(root)
        try:
            mirror = _mirror_formats(con, vocabularies)
        finally:
            con.close()
        tables = _table_formats(store, stored)
        expire(store)
        lake = root / "lake"
        log = log_format(
            {
                "signals": lake / "_delta_log",
                "_releases": lake / "_releases" / "_delta_log",
                "_steward_audit": lake / "_steward_audit" / "_delta_log",
            },
            str(lake),
        )
    return tables + [log] + mirror
