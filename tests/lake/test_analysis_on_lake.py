"""Triage on the lake answers exactly as on the single file.

The steward's exact view (``--exact``): for the same signals, the same ``.sql`` files run over
the ``signals`` view, before and after compaction, with retried batches stored twice, through
the API and through ``lmcp analysis --lake``. The team's view: for the same released cells
(released on the lake by ``lmcp lake release``, copied into the file), the same answers from
``lmcp analysis --lake``, the API, and a lake collector's ``/v1/triage`` and dashboard."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import httpx
import pyarrow as pa
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from analysis import Filters, open_db, open_lake
from analysis._questions import DEFAULT_LIMIT
from analysis._released import RELEASED_QUESTIONS, ask_released, last_released_day
from analysis._session import COOKIE_NAME, make_session
from collector.lake.jobs import compact
from collector.lake.releases import LakeReleases, load_releases, release
from collector.lake.store import LakeStore
from collector.settings import CollectorSettings
from contract.accountant import ReleasePlan
from contract.schema import Platform
from lakedev.seaweed import LoopbackSeaweed
from lmcp.cli import app
from tests._servers import HANG_S, running_collector
from tests.lake.conftest import answers_of, synthetic_pair

pytestmark = pytest.mark.slow

END = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pa.Table]:
    return synthetic_pair(tmp_path_factory.mktemp("file"), 30_000, END)


@pytest.fixture
def pair(synthetic: tuple[Path, pa.Table], tmp_path: Path) -> tuple[Path, LakeStore]:
    """The same signals in a DuckDB file and in a lake (several commits, retries stored)."""
    db, whole = synthetic
    store = LakeStore(str(tmp_path / "lake"))
    for start in range(0, whole.num_rows, 7_000):  # several commits, as collectors make them
        store.append(whole.slice(start, 7_000))
    store.append(whole.slice(1_000, 2_500))  # retries stored twice
    return db, store


@pytest.mark.parametrize(
    "filters", [None, Filters(platform=Platform.windows)], ids=["all", "windows"]
)
def test_every_answer_equal_before_and_after_compaction(
    pair: tuple[Path, LakeStore], filters: Filters | None
) -> None:
    db, store = pair
    expected = answers_of(open_db(db), filters)
    assert any(a.rows for a in expected)  # type: ignore[attr-defined]
    assert store.count() > 30_000  # the duplicates are stored
    assert answers_of(open_lake(store.uri, raw=True), filters) == expected
    compact(store, END + dt.timedelta(days=1))
    assert store.count() == 30_000
    assert answers_of(open_lake(store.uri, raw=True), filters) == expected


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
    expected = answers_of(open_db(db))
    assert answers_of(open_lake(store.uri, raw=True)) == expected
    compact(store, END + dt.timedelta(days=1))
    assert answers_of(open_lake(store.uri, raw=True)) == expected


# -- the team's view: released cells ----------------------------------------------------------

TODAY = END + dt.timedelta(days=1)
#: The release job's day: END's daily period and the week before END (a Monday) are closed;
#: a window of 14 days releases the days from END - 11 and that week, in 12 commits.
RELEASE_DAY = END + dt.timedelta(days=3)
RELEASE = ReleasePlan()
TEAM_TOKEN = "lake-team-token-0123456789"


@pytest.fixture(scope="module")
def released(
    synthetic: tuple[Path, pa.Table], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, LakeStore]:
    """A lake whose closed days were compacted and released by the job, and a copy of the
    file holding the same signals and, copied from the lake, the same released cells."""
    db, whole = synthetic
    root = tmp_path_factory.mktemp("released")
    store = LakeStore(str(root / "lake"))
    store.append(whole)
    store.append(whole.slice(0, 4_000))  # retries
    compact(store, TODAY)
    done = release(store, RELEASE_DAY, RELEASE, retention_days=14)
    assert len(done) == 12 and all(r.status == "released" for r in done)
    copy = root / "copy.duckdb"
    shutil.copy(db, copy)
    with duckdb.connect(str(copy)) as con:
        load_releases(con, LakeReleases(store).read())
    return copy, store


@pytest.mark.parametrize(
    "filters", [None, Filters(platform=Platform.windows)], ids=["all", "windows"]
)
def test_team_answers_on_the_lake_equal_the_files(
    released: tuple[Path, LakeStore], filters: Filters | None
) -> None:
    copy, store = released
    expected = answers_of(open_db(copy), filters, exact=False)
    assert any(a.rows for a in expected)  # type: ignore[attr-defined]
    assert answers_of(open_lake(store.uri), filters, exact=False) == expected


def test_team_cli_on_the_lake(released: tuple[Path, LakeStore], tmp_path: Path) -> None:
    copy, store = released
    runner = CliRunner()
    for question in ("top", "trends", "platforms"):
        on_file = runner.invoke(app, ["analysis", question, "--db", str(copy), "--json"])
        on_lake = runner.invoke(app, ["analysis", question, "--lake", store.uri, "--json"])
        assert on_file.exit_code == 0 and on_lake.exit_code == 0, on_lake.output
        assert json.loads(on_lake.output) == json.loads(on_file.output)
        assert json.loads(on_lake.output)["rows"]
    out = runner.invoke(
        app, ["analysis", "report", "--lake", store.uri, "--out", str(tmp_path / "t.html")]
    )
    assert out.exit_code == 0 and (tmp_path / "t.html").is_file(), out.output


def _lake_collector(store: LakeStore, tmp_path: Path) -> CollectorSettings:
    return CollectorSettings(
        db_path=tmp_path / "collector.duckdb",
        lake_uri=store.uri,
        read_tokens=[SecretStr(TEAM_TOKEN)],
        rate_limit_enabled=False,
    )


def test_a_lake_collector_serves_the_lakes_releases(
    released: tuple[Path, LakeStore], tmp_path: Path
) -> None:
    copy, store = released
    con = open_db(copy)
    try:
        expected = {
            q.value: ask_released(con, q, limit=DEFAULT_LIMIT).to_json() for q in RELEASED_QUESTIONS
        }
        through = last_released_day(con)
    finally:
        con.close()
    auth = {"Authorization": f"Bearer {TEAM_TOKEN}"}
    with running_collector(_lake_collector(store, tmp_path)) as url:
        with httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as http:
            for name, answer in expected.items():
                got = http.get(f"/v1/triage/{name}", headers=auth)
                assert got.status_code == 200, got.text
                doc = got.json()
                assert doc["released_through"] == str(through), name
                assert doc == json.loads(json.dumps(answer)), name
            assert any(a["rows"] for a in expected.values())
            http.cookies.set(COOKIE_NAME, make_session(TEAM_TOKEN), path="/dashboard")
            page = http.get("/dashboard")
            assert page.status_code == 200 and "signals released" in page.text
    with duckdb.connect(str(tmp_path / "collector.duckdb"), read_only=True) as local:
        assert local.execute("SELECT count(*) FROM release_periods").fetchall() == [(0,)]


def test_a_lake_collector_never_releases(synthetic: tuple[Path, pa.Table], tmp_path: Path) -> None:
    _, whole = synthetic
    store = LakeStore(str(tmp_path / "lake"))
    store.append(whole)
    compact(store, TODAY)  # closed, compacted days, none released
    auth = {"Authorization": f"Bearer {TEAM_TOKEN}"}
    with running_collector(_lake_collector(store, tmp_path)) as url:
        answer = httpx.get(f"{url}/v1/triage/trends", headers=auth, trust_env=False, timeout=HANG_S)
        # Nothing released: the answer says so (docs/triage.md, the period), and computes none.
        assert answer.status_code == 404 and answer.json()["code"] == "not_covered"
        assert "nothing is released yet" in answer.json()["detail"].lower()
    assert not LakeReleases(store).exists()
    with duckdb.connect(str(tmp_path / "collector.duckdb"), read_only=True) as local:
        assert local.execute("SELECT count(*) FROM release_periods").fetchall() == [(0,)]
