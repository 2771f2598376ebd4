"""The data catalogue lists every stored form of the lake mode, checked against the lake's own
schemas and against a real lake and mirror written here: the signals, ``_releases`` and
``_steward_audit`` Delta tables, the keys of their Delta logs (which hold no signal value),
and the steward's mirror file. A new column, table or log key fails until it is catalogued
(and then reviewed: ``test_audit_schema.py``)."""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from collector.lake.jobs import compact_day, retain
from collector.lake.mirror import open_mirrored
from collector.lake.releases import RELEASE_SCHEMA, release
from collector.lake.steward import AUDIT_SCHEMA, LakeAudit
from collector.lake.store import LAKE_SCHEMA, LakeStore, lake_rows
from collector.roles import AuditRow
from collector.rows import rows_from_models
from contract.accountant import ReleasePlan
from contract.schema import FrictionSignal
from lmcp.datacatalogue import DataCatalogue, DataFormat
from scripts._lake_cluster import random_signals

DAY = dt.date(2026, 11, 29)
TODAY = DAY + dt.timedelta(days=3)  # DAY's week is closed: released
RELEASE_WINDOW_DAYS = 9
#: A tiny noise scale: cells of a few signals clear ring3's threshold too, so the releases' log
#: holds statistics of every column (``key`` included).
NO_NOISE = ReleasePlan(rho=1e6)
LOG_KEY = "lake.delta_log"


def _format(data_catalogue: DataCatalogue, key: str) -> DataFormat:
    found = [fmt for fmt in data_catalogue.formats if fmt.key == key]
    assert found, f"{key}: not in the data catalogue"
    return found[0]


def _signals(count: int, seed: int, day: dt.date) -> list[FrictionSignal]:
    rng = random.Random(seed)
    return [
        FrictionSignal.model_validate_json(json.dumps(item))
        for item in random_signals(rng, count, day.isoformat())
    ]


def _leaves(prefix: str, value: object, out: set[str]) -> None:
    if prefix.endswith(".stats") and isinstance(value, str):
        value = json.loads(value)  # the statistics: a JSON text inside the action
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _leaves(f"{prefix}.{key}" if prefix else str(key), item, out)
    else:
        out.add(prefix)


def log_keys(log: Path) -> set[str]:
    """Every leaf key of every action of every commit in ``log`` (read here, independently)."""
    out: set[str] = set()
    for commit in sorted(log.glob("*.json")):
        for line in commit.read_text(encoding="utf-8").splitlines():
            if line.strip():
                _leaves("", json.loads(line), out)
    return out


@pytest.fixture(scope="module")
def written_lake(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[FrictionSignal]]:
    """A lake through every writer: flushes, compaction, a release with cells, a steward
    read, an open day. Written once (the release samples every cell of every cube's domain);
    each test takes its own copy (``_lake``)."""
    root = tmp_path_factory.mktemp("written-lake") / "lake"
    store = LakeStore(str(root))
    closed = _signals(60, 3, DAY)
    for i in range(0, 60, 20):  # three flushes, three commits
        store.append(lake_rows(rows_from_models(closed[i : i + 20]), DAY))
    compact_day(store, DAY)
    # A window reaching DAY's Monday: DAY's week and its seven days are released.
    assert release(store, TODAY, NO_NOISE, retention_days=RELEASE_WINDOW_DAYS)[0].cells > 0
    LakeAudit(store).append(AuditRow(TODAY, "bob-steward", "/v1/signals/count", "since=none"))
    fresh = _signals(5, 4, TODAY)
    store.append(lake_rows(rows_from_models(fresh), TODAY))
    return root, closed + fresh


def _lake(
    written: tuple[Path, list[FrictionSignal]], root: Path
) -> tuple[LakeStore, list[FrictionSignal]]:
    """A copy of the written lake under ``root``, for a test that opens or rewrites it."""
    source, stored = written
    shutil.copytree(source, root / "lake")
    return LakeStore(str(root / "lake")), stored


def test_every_column_of_the_lake_tables_is_catalogued(data_catalogue: DataCatalogue) -> None:
    """From the schemas the lake writes with: a new column fails until it is catalogued."""
    for key, schema in (
        ("lake.signals", LAKE_SCHEMA),
        ("lake.releases", RELEASE_SCHEMA),
        ("lake.steward_audit", AUDIT_SCHEMA),
    ):
        fields = _format(data_catalogue, key).fields
        assert [f.name for f in fields] == schema.names, key
        assert [f.nullable for f in fields] == [f.nullable for f in schema], key
    kinds = {f.name: f.kind for f in _format(data_catalogue, "lake.signals").fields}
    assert kinds["signal_id"] == "uuid" and kinds["compacted"] == "boolean"
    assert not [n for n, k in kinds.items() if k in ("timestamp", "blob", "other")]


def test_every_table_of_a_real_mirror_is_catalogued(
    tmp_path: Path,
    data_catalogue: DataCatalogue,
    written_lake: tuple[Path, list[FrictionSignal]],
) -> None:
    """Every table ``open_mirrored`` leaves in the file, column for column: the mirror's own as
    ``mirror.*``, the collector's (from its migrations) as ``duckdb.*``."""
    store, _ = _lake(written_lake, tmp_path)
    con, _ = open_mirrored(store, tmp_path / "mirror.duckdb")
    try:
        tables = [
            str(r[0])
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE NOT temporary"
            ).fetchall()
        ]
        views = {
            str(r[0])
            for r in con.execute(
                "SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary"
            ).fetchall()
        }
        columns = {
            table: [
                str(r[0])
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = $1 "
                    "ORDER BY ordinal_position",
                    [table],
                ).fetchall()
            ]
            for table in tables
        }
    finally:
        con.close()
    keys = {fmt.key for fmt in data_catalogue.formats}
    assert {"mirror_signals", "mirror_open", "mirror_days", "lmcp_mirror"} <= set(tables)
    assert views == {"signals"}  # a view over mirror_signals and mirror_open: no row of its own
    for table in tables:
        key = f"mirror.{table}" if f"mirror.{table}" in keys else f"duckdb.{table}"
        assert [f.name for f in _format(data_catalogue, key).fields] == columns[table], table
    mirror = {k for k in keys if k.startswith("mirror.")}
    assert mirror == {f"mirror.{t}" for t in tables if f"duckdb.{t}" not in keys}


def test_the_delta_log_holds_only_catalogued_keys_and_no_signal_value(
    tmp_path: Path,
    data_catalogue: DataCatalogue,
    written_lake: tuple[Path, list[FrictionSignal]],
) -> None:
    """A real lake through every writer (flushes, compaction, release, audit, retention with
    VACUUM, a checkpoint): each key of each log is catalogued; the signals table's statistics
    are of ``compacted`` only, and no signal value or id is anywhere in its log."""
    store, stored = _lake(written_lake, tmp_path)
    retain(store, TODAY + dt.timedelta(days=200), 90, grace_hours=0)
    store.table().create_checkpoint()
    named = {f.name for f in _format(data_catalogue, LOG_KEY).fields}
    lake = Path(store.uri)
    logs = [lake / "_delta_log", lake / "_releases" / "_delta_log"]
    logs.append(lake / "_steward_audit" / "_delta_log")
    for log in logs:
        keys = log_keys(log)
        assert keys - named == set(), f"{log.parent.name}: keys the catalogue does not name"
    signals_log = log_keys(logs[0])
    stats = {k for k in signals_log if k.startswith("add.stats.")}
    assert stats == {"add.stats.numRecords"} | {
        f"add.stats.{part}.compacted" for part in ("minValues", "maxValues", "nullCount")
    }
    released = log_keys(logs[1])
    assert "add.stats.minValues.key" in released  # the releases' statistics: every column
    text = "".join(p.read_text() for p in sorted(logs[0].glob("*.json")))
    checkpoints = sorted(logs[0].glob("*.checkpoint.parquet"))
    assert checkpoints
    for checkpoint in checkpoints:
        rows = pq.read_table(checkpoint).to_pylist()
        text += json.dumps(rows, default=str)
        for row in rows:
            if row["add"] and row["add"]["stats"]:
                kept = json.loads(row["add"]["stats"])
                assert set(kept["minValues"]) == set(kept["maxValues"]) == {"compacted"}
    values = (
        {
            str(v)
            for s in stored
            for v in (s.tool_attempted, s.error_class.value, s.client.platform.value)
        }
        | {s.signal_id.hex for s in stored}
        | {str(s.signal_id) for s in stored}
    )
    assert len(values) > 20
    assert [v for v in values if v in text] == []


def test_the_lake_section_is_the_same_at_every_generation(data_catalogue: DataCatalogue) -> None:
    """No temporary path, time or random id reaches the page: a second generation of the lake
    section, from its own example lake, equals the session's (``data_catalogue``)."""
    from lmcp.datacatalogue._lake import lake_formats

    stored = [fmt for fmt in data_catalogue.formats if fmt.key == "duckdb.signals"]
    again = lake_formats(stored, dict(data_catalogue.vocabularies))
    keys = {fmt.key for fmt in again}
    assert {"lake.signals", "lake.releases", LOG_KEY, "mirror.mirror_signals"} <= keys
    assert again == [fmt for fmt in data_catalogue.formats if fmt.key in keys]
    text = json.dumps([str(fmt) for fmt in again])
    assert "/tmp" not in text and "lmcp-catalogue-" not in text
