"""Structural audits over every wire and storage format: no free text, no identifier, no time
finer than a day; a field nobody reviewed fails until it is classified in the reviewed data
catalogue (``privacy_tests/data_catalogue.json``); ``docs/data-catalogue.md`` matches the code.
(The wire models themselves are walked by ``test_client_privacy.py``.)"""

from __future__ import annotations

import copy
import datetime as dt
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

from collector.db import migrate
from lmcp.cli import app as lmcp
from lmcp.datacatalogue import DataCatalogue, render_json, render_markdown
from privacy_tests.audit.schema import audit_catalogue, audit_model, audit_storage, load_reviewed

DOC = Path(__file__).resolve().parent.parent / "docs" / "data-catalogue.md"


@pytest.fixture(scope="module")
def reviewed() -> dict[str, Any]:
    return load_reviewed()


@pytest.fixture
def migrated() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(":memory:")
    migrate(con)
    yield con
    con.close()


def _generated(cat: DataCatalogue) -> list[tuple[str, str, str, str]]:
    return [(fmt, f.name, f.kind, f.values) for fmt, f in cat.fields()]


# -- the reviewed data catalogue -----------------------------------------------------------------


def test_every_field_of_every_format_is_reviewed(
    data_catalogue: DataCatalogue, reviewed: dict[str, Any]
) -> None:
    assert not data_catalogue.omitted, "the audit needs the collector extra installed"
    keys = {fmt.key for fmt in data_catalogue.formats}
    # Every format of the pipeline is in the catalogue: wire, client files, tables, exports.
    assert {"wire.signal", "wire.batch", "wire.http", "client.outbox", "client.sent_log"} <= keys
    assert {"duckdb.signals", "export.parquet", "export.csv"} <= keys
    # ... and every stored form of the lake mode: its three Delta tables, their log, the mirror.
    assert {"lake.signals", "lake.releases", "lake.steward_audit", "lake.delta_log"} <= keys
    assert {"mirror.mirror_signals", "mirror.mirror_open", "mirror.mirror_days"} <= keys
    assert "mirror.lmcp_mirror" in keys
    assert audit_catalogue(_generated(data_catalogue), reviewed) == []


def test_a_new_field_fails_until_it_is_reviewed(
    data_catalogue: DataCatalogue, reviewed: dict[str, Any]
) -> None:
    """The lint can fail: a field added to the wire, a column added to a table."""

    class Leaky(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        locale: str

    fields = _generated(data_catalogue) + [
        ("wire.signal", "locale", "string", ""),
        ("duckdb.signals", "client_ip", "string", ""),
        ("export.csv", "hostname", "string", ""),
    ]
    problems = audit_catalogue(fields, reviewed)
    assert any("wire.signal.locale: a new field" in p for p in problems)
    assert any("duckdb.signals.client_ip: a new field" in p for p in problems)
    assert any("names an address" in p for p in problems)
    assert any("export.csv.hostname" in p and "names a person" in p for p in problems)
    assert "locale: free str" in audit_model(Leaky)[0]


def test_a_reviewer_cannot_wave_free_text_into_signal_data(
    data_catalogue: DataCatalogue, reviewed: dict[str, Any]
) -> None:
    doc = copy.deepcopy(reviewed)
    signal = doc["formats"]["wire.signal"]["fields"]
    signal["tool_attempted"]["class"] = "authored_text"
    signal["day"]["class"] = "timestamp"
    signal["friction_type"]["why"] = ""
    del doc["formats"]["export.csv"]["fields"]["ring"]
    doc["formats"]["duckdb.signals"]["fields"]["gone"] = {"class": "enum", "why": "x"}
    problems = audit_catalogue(_generated(data_catalogue), doc)
    assert any("tool_attempted: class authored_text is not allowed" in p for p in problems)
    assert any("wire.signal.day: reviewed as timestamp but its type is date" in p for p in problems)
    assert any("friction_type: the reviewed catalogue gives no reason" in p for p in problems)
    assert any("export.csv.ring: a new field" in p for p in problems)
    assert any(
        "duckdb.signals.gone: reviewed, but the code no longer has it" in p for p in problems
    )


# -- storage ------------------------------------------------------------------------------------


def test_every_duckdb_column_obeys_the_storage_rules(
    migrated: duckdb.DuckDBPyConnection, reviewed: dict[str, Any]
) -> None:
    assert audit_storage(migrated, reviewed) == []
    tables = {r[0] for r in migrated.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert "signals" in tables


def test_the_storage_audit_catches_a_leaky_column(
    migrated: duckdb.DuckDBPyConnection, reviewed: dict[str, Any]
) -> None:
    migrated.execute("ALTER TABLE signals ADD COLUMN note VARCHAR")
    migrated.execute("ALTER TABLE signals ADD COLUMN received_at TIMESTAMP")
    migrated.execute("ALTER TABLE signals ADD COLUMN user_agent VARCHAR")
    migrated.execute("CREATE TABLE visits (remote_addr VARCHAR)")
    problems = audit_storage(migrated, reviewed)
    assert any("signals.note: VARCHAR without a CHECK" in p for p in problems)
    assert any("signals.received_at: TIMESTAMP" in p for p in problems)
    assert any("signals.user_agent: names an address or a user agent" in p for p in problems)
    assert any(
        "duckdb.visits: a table the reviewed data catalogue does not list" in p for p in problems
    )


def test_no_signal_column_is_finer_than_a_day_or_free(migrated: duckdb.DuckDBPyConnection) -> None:
    """Belt and braces over the rule engine: the signals table's types, spelled out."""
    types = dict(
        migrated.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'signals'"
        ).fetchall()
    )
    assert not [c for c, t in types.items() if t in ("VARCHAR", "BLOB", "JSON")]
    assert not [c for c, t in types.items() if "TIMESTAMP" in t or t in ("TIME", "INTERVAL")]
    assert types["day"] == types["received_day"] == "DATE"


# -- exports ------------------------------------------------------------------------------------


def test_export_columns_are_the_reviewed_ones(data_catalogue: DataCatalogue) -> None:
    """Parquet keeps typed enums (dictionary columns); CSV holds no column beyond the table's."""
    by_key = {fmt.key: fmt for fmt in data_catalogue.formats}
    table_cols = {f.name for f in by_key["duckdb.signals"].fields}
    for key in ("export.parquet", "export.csv"):
        cols = {f.name for f in by_key[key].fields}
        assert cols <= table_cols, f"{key} exports a column the table does not have"
    kinds = {f.name: f.kind for f in by_key["export.parquet"].fields}
    assert not [c for c, k in kinds.items() if k in ("timestamp", "blob", "other")]
    strings = [c for c, k in kinds.items() if k == "string"]
    assert strings == ["signal_id"], "a Parquet text column other than the random id"


def test_exports_written_by_the_real_writers_parse_to_the_catalogued_columns(
    migrated: duckdb.DuckDBPyConnection, data_catalogue: DataCatalogue
) -> None:
    """Round-trip: the export SQL through pyarrow's writers, read back."""
    from collector.db import SQL_DIR
    from service.sql import load_sql

    by_key = {fmt.key: fmt for fmt in data_catalogue.formats}
    parquet = load_sql(SQL_DIR, "export_parquet")
    table = migrated.sql(parquet, params=[dt.date(2026, 1, 1)]).to_arrow_table()
    buf = io.BytesIO()
    pq.write_table(table, buf)
    buf.seek(0)
    assert pq.read_schema(buf).names == [f.name for f in by_key["export.parquet"].fields]
    table = migrated.sql(load_sql(SQL_DIR, "export_csv"), params=[None]).to_arrow_table()
    sink = io.BytesIO()
    pa_csv.write_csv(table, sink)
    assert isinstance(table, pa.Table)
    header = sink.getvalue().decode().splitlines()[0].replace('"', "").split(",")
    assert header == [f.name for f in by_key["export.csv"].fields]


# -- the generated catalogue: doc and command ----------------------------------------------------


def test_docs_data_catalogue_matches_the_code(data_catalogue: DataCatalogue) -> None:
    expected = render_markdown(data_catalogue)
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/data-catalogue.md is stale: run `lmcp signals catalogue --markdown > "
        "docs/data-catalogue.md` and review the diff"
    )


def test_every_catalogued_field_has_type_values_and_example(data_catalogue: DataCatalogue) -> None:
    missing = []
    for key, f in data_catalogue.fields():
        if key.startswith("duckdb.skill"):
            continue  # Cloud Skills tables: no example row is written by the generator
        if not f.type or (f.kind not in ("list", "object") and not f.values):
            missing.append(f"{key}.{f.name}: no type or values")
        if f.kind not in ("object",) and not f.example:
            missing.append(f"{key}.{f.name}: no example")
    assert missing == []


@pytest.mark.slow
def test_lmcp_signals_catalogue_prints_the_catalogue(data_catalogue: DataCatalogue) -> None:
    runner = CliRunner()
    md = runner.invoke(lmcp, ["signals", "catalogue", "--markdown"])
    assert md.exit_code == 0, md.output
    assert md.output == render_markdown(data_catalogue)
    js = runner.invoke(lmcp, ["signals", "catalogue", "--json"])
    assert js.exit_code == 0 and js.output == render_json(data_catalogue)
    plain = runner.invoke(lmcp, ["signals", "catalogue"])
    assert plain.exit_code == 0 and "signal_id" in plain.output and "export.csv" in plain.output
