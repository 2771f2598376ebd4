"""Triage on the lake answers exactly as on the single file, for the same signals: the same
``.sql`` files run over the ``signals`` view, before and after compaction, with retried
batches stored twice, through the API and through ``lmcp analysis --lake``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from analysis import Filters, open_db, open_lake
from analysis._synth import synthesize
from analysis.report import answer_all
from collector.lake.jobs import compact
from collector.lake.load import lake_rows_from_duckdb
from collector.lake.seaweed import LoopbackSeaweed
from collector.lake.store import LakeStore
from contract.schema import Platform
from lmcp.cli import app

pytestmark = pytest.mark.slow

END = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    db = tmp_path_factory.mktemp("file") / "signals.duckdb"
    synthesize(db, 30_000, end_day=END)
    con = duckdb.connect(str(db), read_only=True)
    try:
        return db, lake_rows_from_duckdb(con)
    finally:
        con.close()


@pytest.fixture
def pair(synthetic: tuple[Path, pa.Table], tmp_path: Path) -> tuple[Path, LakeStore]:
    """The same signals in a DuckDB file and in a lake (several commits, retries stored)."""
    db, whole = synthetic
    store = LakeStore(str(tmp_path / "lake"))
    for start in range(0, whole.num_rows, 7_000):  # several commits, as collectors make them
        store.append(whole.slice(start, 7_000))
    store.append(whole.slice(1_000, 2_500))  # retries stored twice
    return db, store


def _answers(con: duckdb.DuckDBPyConnection, filters: Filters | None = None) -> list[object]:
    try:
        return list(answer_all(con, filters, exact=True))
    finally:
        con.close()


@pytest.mark.parametrize(
    "filters", [None, Filters(platform=Platform.windows)], ids=["all", "windows"]
)
def test_every_answer_equal_before_and_after_compaction(
    pair: tuple[Path, LakeStore], filters: Filters | None
) -> None:
    db, store = pair
    expected = _answers(open_db(db), filters)
    assert any(a.rows for a in expected)  # type: ignore[attr-defined]
    assert store.count() > 30_000  # the duplicates are stored
    assert _answers(open_lake(store.uri), filters) == expected
    compact(store, END + dt.timedelta(days=1))
    assert store.count() == 30_000
    assert _answers(open_lake(store.uri), filters) == expected


def test_cli_answers_equal(pair: tuple[Path, LakeStore]) -> None:
    db, store = pair
    runner = CliRunner()
    on_file = runner.invoke(app, ["analysis", "top", "--db", str(db), "--json", "--exact"])
    on_lake = runner.invoke(app, ["analysis", "top", "--lake", store.uri, "--json", "--exact"])
    assert on_file.exit_code == 0 and on_lake.exit_code == 0, on_lake.output
    assert json.loads(on_lake.output) == json.loads(on_file.output)
    both = runner.invoke(app, ["analysis", "top", "--db", str(db), "--lake", store.uri])
    assert both.exit_code != 0


def test_answers_equal_on_seaweedfs_s3(
    synthetic: tuple[Path, pa.Table], seaweed: LoopbackSeaweed, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, whole = synthetic
    store = LakeStore(seaweed.uri("triage"), seaweed.storage_options)
    store.append(whole.slice(0, 20_000))
    store.append(whole.slice(20_000))
    store.append(whole.slice(0, 3_000))  # retries
    monkeypatch.setenv("LMCP_COLLECTOR_LAKE_S3_ENDPOINT", seaweed.endpoint)
    monkeypatch.setenv("LMCP_COLLECTOR_LAKE_S3_KEY_ID", seaweed.key_id)
    monkeypatch.setenv("LMCP_COLLECTOR_LAKE_S3_SECRET", seaweed.secret)
    monkeypatch.setenv("LMCP_COLLECTOR_LAKE_S3_ALLOW_HTTP", "true")
    expected = _answers(open_db(db))
    assert _answers(open_lake(store.uri)) == expected
    compact(store, END + dt.timedelta(days=1))
    assert _answers(open_lake(store.uri)) == expected
