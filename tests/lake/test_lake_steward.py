"""The steward's routes on lake collectors read the lake, and their audit is one shared trail.

Two lake collectors on one lake and one file-mode collector take the same signals (batches
retried on both lake collectors, and across midnight); through the real HTTP API, a steward's
count on either lake collector equals the number of distinct ids and the file's count, the
exports equal the file's row for row (Parquet and CSV, with and without ``since``, before and
after compaction), a backup holds one version of the lake that ``lmcp analysis`` opens, and
every steward read of either collector lands in ``<lake>/_steward_audit`` before it is served,
visible to ``lmcp lake audit``. A read that cannot be audited is refused and serves nothing.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import random
import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from fastapi import FastAPI
from pydantic import SecretStr
from typer.testing import CliRunner

from analysis._api import open_db, open_lake
from analysis.report import answer_all
from collector.lake.jobs import compact, retain
from collector.lake.releases import LakeReleases, release
from collector.lake.steward import AUDIT_DIR, LakeAudit, LakeSteward
from collector.lake.store import LakeStore
from collector.read_routes import BatchStream, build_read_router
from collector.settings import CollectorSettings, StewardToken
from contract.accountant import ReleasePlan
from lakedev.seaweed import LoopbackSeaweed
from lmcp.cli import app
from scripts._lake_cluster import random_signals
from tests._servers import HANG_S, running_collector, serving_app, wait_until
from tests.lake.conftest import rows

STEWARD = "lake-steward-token-0123456789"
TEAM = "lake-team-token-0123456789ab"
STEWARD_AUTH = {"Authorization": f"Bearer {STEWARD}"}
TODAY = dt.datetime.now(dt.UTC).date()
D1, D2, D3 = (TODAY - dt.timedelta(days=n) for n in (2, 1, 0))
#: Distinct signals the feed sends (40 + 30 + 25 + 20), retries included many times over.
DISTINCT = 115


class Clock:
    """The collectors' UTC day (``received_day``), moved by the test."""

    def __init__(self) -> None:
        self.day = D1

    def __call__(self) -> dt.date:
        return self.day


@dataclass
class Cluster:
    lake_a: str
    lake_b: str
    file: str
    store: LakeStore
    clock: Clock
    backups: Path


def _settings(db: Path, backups: Path, **extra: Any) -> CollectorSettings:
    return CollectorSettings(
        db_path=db,
        read_tokens=[SecretStr(TEAM)],
        steward_tokens=[StewardToken(label="alice-steward", token=SecretStr(STEWARD))],
        backup_dir=backups,
        rate_limit_enabled=False,
        **extra,
    )


@contextmanager
def cluster(tmp_path: Path, store: LakeStore, **lake: Any) -> Iterator[Cluster]:
    """Lake collectors A and B on ``store`` and a file-mode collector, on one clock."""
    clock = Clock()
    backups = tmp_path / "backups"
    with ExitStack() as stack:
        urls = [
            stack.enter_context(
                running_collector(
                    _settings(tmp_path / f"{name}.duckdb", backups / name, **extra), today=clock
                )
            )
            for name, extra in (
                ("a", {"lake_uri": store.uri, "lake_ship_interval_s": 0.05, **lake}),
                ("b", {"lake_uri": store.uri, "lake_ship_interval_s": 0.05, **lake}),
                ("file", {}),
            )
        ]
        a, b, file = urls
        yield Cluster(a, b, file, store=store, clock=clock, backups=backups)


def _post(url: str, items: list[dict[str, Any]]) -> None:
    answer = httpx.post(
        f"{url}/v1/signals", json={"signals": items}, trust_env=False, timeout=HANG_S
    )
    assert answer.status_code == 200, answer.text


def feed(c: Cluster) -> None:
    """Three received days; every batch goes to the file once or more, and to A and/or B,
    retried on the other lake collector, and again after midnight."""
    rng = random.Random(7)
    b1, b2 = random_signals(rng, 40, D1.isoformat()), random_signals(rng, 30, D1.isoformat())
    b3, b4 = random_signals(rng, 25, D2.isoformat()), random_signals(rng, 20, D3.isoformat())
    c.clock.day = D1
    for url, batch in ((c.lake_a, b1), (c.lake_b, b1), (c.lake_b, b2), (c.file, b1), (c.file, b2)):
        _post(url, batch)
    c.clock.day = D2
    for url, batch in ((c.lake_a, b3), (c.lake_a, b1), (c.lake_b, b3), (c.file, b3), (c.file, b1)):
        _post(url, batch)
    c.clock.day = D3
    for url, batch in ((c.lake_b, b4), (c.lake_a, b3), (c.file, b4), (c.file, b3)):
        _post(url, batch)
    # The lake collectors acknowledged into their files; wait until their shippers moved
    # every signal into the lake.
    sent = {str(s["signal_id"]) for s in b1 + b2 + b3 + b4}
    wait_until(lambda: _distinct(c.store) >= len(sent), what="the shippers moved every signal")


def _distinct(store: LakeStore) -> int:
    con = duckdb.connect()
    try:
        store.signals_relation(con)
        return int(con.execute("SELECT count(*) FROM signals").fetchall()[0][0])
    finally:
        con.close()


def _get(url: str, path: str, **params: str) -> httpx.Response:
    answer = httpx.get(
        url + path, params=params, headers=STEWARD_AUTH, trust_env=False, timeout=HANG_S
    )
    assert answer.status_code == 200, answer.text
    return answer


def count(url: str, **params: str) -> int:
    return int(_get(url, "/v1/signals/count", **params).json()["count"])


def parquet(url: str, **params: str) -> pa.Table:
    return pq.read_table(io.BytesIO(_get(url, "/v1/signals/export", **params).content))


def csv(url: str, **params: str) -> bytes:
    return _get(url, "/v1/signals/export", format="csv", **params).content


def assert_lake_reads_equal_the_file(c: Cluster) -> None:
    expected = {None: DISTINCT, D2: 45, D3: 20}  # b3 (25) received D2, b4 (20) received D3
    for since, n in expected.items():
        params = {} if since is None else {"since": since.isoformat()}
        assert count(c.file, **params) == n
        on_file = parquet(c.file, **params)
        assert on_file.num_rows == n
        for url in (c.lake_a, c.lake_b):
            assert count(url, **params) == n, (url, since)
            on_lake = parquet(url, **params)
            assert on_lake.schema == on_file.schema
            assert on_lake.equals(on_file), (url, since)
        assert csv(c.lake_a, **params) == csv(c.file, **params)


@pytest.mark.slow
def test_lake_count_and_export_equal_the_file_mode(tmp_path: Path) -> None:
    store = LakeStore(str(tmp_path / "lake"))
    with cluster(tmp_path, store) as c:
        feed(c)
        assert store.count() > DISTINCT  # the retries are stored
        assert_lake_reads_equal_the_file(c)
        compact(store, D3)  # D1 and D2 compacted, D3 open: ``since`` reads every day
        assert_lake_reads_equal_the_file(c)
        compact(store, D3 + dt.timedelta(days=1))  # all compacted: ``since`` prunes days
        assert store.count() == DISTINCT
        assert_lake_reads_equal_the_file(c)


@pytest.mark.slow
def test_lake_count_and_export_on_seaweedfs_s3(
    seaweed: LoopbackSeaweed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lazy path: the view is an Arrow dataset over S3 objects, streamed."""
    store = LakeStore(seaweed.uri("steward"), seaweed.storage_options)
    s3 = {
        "lake_s3_endpoint": seaweed.endpoint,
        "lake_s3_key_id": seaweed.key_id,
        "lake_s3_secret": SecretStr(seaweed.secret),
        "lake_s3_allow_http": True,
    }
    with cluster(tmp_path, store, **s3) as c:
        feed(c)
        assert_lake_reads_equal_the_file(c)
    monkeypatch.setenv("LMCP_COLLECTOR_LAKE_S3_ENDPOINT", seaweed.endpoint)
    monkeypatch.setenv("LMCP_COLLECTOR_LAKE_S3_KEY_ID", seaweed.key_id)
    monkeypatch.setenv("LMCP_COLLECTOR_LAKE_S3_SECRET", seaweed.secret)
    monkeypatch.setenv("LMCP_COLLECTOR_LAKE_S3_ALLOW_HTTP", "true")
    out = CliRunner().invoke(app, ["lake", "audit", "--lake", store.uri, "--json"])
    assert out.exit_code == 0, out.output
    audited = json.loads(out.output)
    # per ``since`` (3): count and Parquet on A and on B, CSV on A
    assert len(audited) == 3 * 5
    assert {r["label"] for r in audited} == {"alice-steward"}


def _cli(*args: str) -> Any:
    out = CliRunner().invoke(app, list(args))
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


@pytest.mark.slow
def test_backup_is_one_version_of_the_lake_and_opens_with_analysis(tmp_path: Path) -> None:
    store = LakeStore(str(tmp_path / "lake"))
    with cluster(tmp_path, store) as c:
        feed(c)
        later = D3 + dt.timedelta(days=10)  # the weeks and days of the feed are closed
        compact(store, later)
        # 21 days: the window reaches back to the feed's Monday whatever day today is, so its
        # week is released (at 14, a run late in the week released its days only).
        done = release(store, later, ReleasePlan(), retention_days=21)
        assert done and all(r.status == "released" for r in done)
        store.append(rows(10, seed=99, received_day=D3))  # another commit, 10 more signals
        took = httpx.post(
            f"{c.lake_b}/v1/admin/backup", headers=STEWARD_AUTH, trust_env=False, timeout=HANG_S
        )
        assert took.status_code == 200, took.text
        from_file = httpx.post(
            f"{c.file}/v1/admin/backup", headers=STEWARD_AUTH, trust_env=False, timeout=HANG_S
        )
        assert from_file.status_code == 200
    answer = took.json()
    assert answer["signals"] == DISTINCT + 10
    copy = c.backups / "b" / answer["file"]
    file_copy = c.backups / "file" / from_file.json()["file"]
    assert sorted(p.name for p in copy.parent.iterdir()) == [copy.name]  # no partial left
    with duckdb.connect(str(copy), read_only=True) as con:
        counted = con.execute("SELECT count(*), count(DISTINCT signal_id) FROM signals")
        assert counted.fetchone() == (DISTINCT + 10, DISTINCT + 10)
        records = con.execute("SELECT count(*) FROM release_periods").fetchone()
        lake_rows = LakeReleases(store).read()
        assert records == (lake_rows.filter(pc.is_null(lake_rows["key"])).num_rows,)
        cols = [r[0] for r in con.execute("DESCRIBE signals").fetchall()]
        extra = rows(10, seed=99, received_day=D3).column("signal_id").to_pylist()
        kept = con.execute(
            "SELECT * FROM signals WHERE unhex(replace(CAST(signal_id AS VARCHAR), '-', '')) "
            "NOT IN (SELECT unnest($1::BLOB[])) ORDER BY signal_id",
            [extra],
        ).fetchall()
    with duckdb.connect(str(file_copy), read_only=True) as con:
        assert [r[0] for r in con.execute("DESCRIBE signals").fetchall()] == cols
        assert kept == con.execute("SELECT * FROM signals ORDER BY signal_id").fetchall()
    # The steward's exact answers from the copy equal the lake's, read once the feed's weeks
    # are closed (the exact view answers closed weeks only, as the team's does); the team's too.
    copy_con, lake_con = open_db(copy), open_lake(store.uri, raw=True)
    try:
        exact = answer_all(copy_con, k=2, exact=True, today=later)
        assert any(answer.rows for answer in exact)
        assert exact == answer_all(lake_con, k=2, exact=True, today=later)
    finally:
        copy_con.close()
        lake_con.close()
    released = _cli("analysis", "trends", "--db", str(copy), "--json")
    assert released == _cli("analysis", "trends", "--lake", store.uri, "--json")


@pytest.mark.slow
def test_one_audit_trail_for_every_lake_collector(tmp_path: Path) -> None:
    store = LakeStore(str(tmp_path / "lake"))
    with cluster(tmp_path, store) as c:
        feed(c)
        team = {"Authorization": f"Bearer {TEAM}"}
        for url in (c.lake_a, c.lake_b):
            for method, path in (("GET", "/v1/signals/count"), ("GET", "/v1/signals/export"),
                                 ("POST", "/v1/admin/backup")):  # fmt: skip
                refused = httpx.request(
                    method, url + path, headers=team, trust_env=False, timeout=HANG_S
                )
                assert refused.status_code == 403, path
                assert refused.json()["code"] == "steward_only"
        assert count(c.lake_a, since=D2.isoformat()) == 45
        assert parquet(c.lake_b, format="parquet").num_rows == DISTINCT
        backup = httpx.post(
            f"{c.lake_a}/v1/admin/backup", headers=STEWARD_AUTH, trust_env=False, timeout=HANG_S
        )
        assert backup.status_code == 200
    expected = [
        (TODAY, "alice-steward", "/v1/admin/backup", ""),
        (TODAY, "alice-steward", "/v1/signals/count", f"since={D2.isoformat()}"),
        (TODAY, "alice-steward", "/v1/signals/export", "format=parquet"),
    ]
    trail = [(r.read_day, r.label, r.route, r.filter) for r in LakeAudit(store).rows()]
    assert trail == expected  # reads through A and B, one trail, none for a refused read
    printed = _cli("lake", "audit", "--lake", store.uri, "--json")
    assert [tuple(r.values()) for r in printed] == [(d.isoformat(), *e) for d, *e in expected]
    table = CliRunner().invoke(app, ["lake", "audit", "--lake", store.uri])
    assert table.exit_code == 0 and "alice-steward" in table.output
    assert "/v1/admin/backup" in table.output and "3 read(s)" in table.output
    for name in ("a", "b"):  # nothing scattered in the collectors' own files
        with duckdb.connect(str(tmp_path / f"{name}.duckdb"), read_only=True) as local:
            assert local.execute("SELECT count(*) FROM steward_audit").fetchone() == (0,)
    stored = b"".join(
        p.read_bytes() for p in (tmp_path / "lake" / AUDIT_DIR).rglob("*") if p.is_file()
    )
    assert STEWARD.encode() not in stored and TEAM.encode() not in stored
    assert b"127.0.0.1" not in stored
    # The lake's retention deletes signals, not the stewards' trail.
    retain(store, TODAY + dt.timedelta(days=400), 1, grace_hours=0)
    assert store.count() == 0
    assert [(r.read_day, r.label, r.route, r.filter) for r in LakeAudit(store).rows()] == expected


@pytest.mark.slow
def test_a_read_that_cannot_be_audited_serves_nothing(tmp_path: Path) -> None:
    store = LakeStore(str(tmp_path / "lake"))
    with cluster(tmp_path, store) as c:
        feed(c)
        assert count(c.lake_a) == DISTINCT  # audited: the table exists now
        log = tmp_path / "lake" / AUDIT_DIR / "_delta_log"
        shutil.rmtree(log)
        log.write_text("not a log")  # the audit table can no longer be written
        for url in (c.lake_a, c.lake_b):
            for method, path in (("GET", "/v1/signals/count"), ("GET", "/v1/signals/export"),
                                 ("GET", "/v1/signals/export?format=csv"),
                                 ("POST", "/v1/admin/backup")):  # fmt: skip
                refused = httpx.request(
                    method, url + path, headers=STEWARD_AUTH, trust_env=False, timeout=HANG_S
                )
                assert refused.status_code == 503, (url, path, refused.status_code)
                assert refused.json()["code"] == "audit_failed"
                assert b"signal_id" not in refused.content and b"count" not in refused.content
        assert [p for name in ("a", "b") for p in (c.backups / name).glob("*")] == []


def test_since_reads_only_its_days_once_they_are_compacted(tmp_path: Path) -> None:
    """Pruning by ``since`` is exact: with an open day at or after ``since``, every day is
    read (an open row's id may be older); once those days are compacted, only they are."""
    store = LakeStore(str(tmp_path / "lake"))
    store.append(rows(30, seed=1, received_day=D1))
    store.append(rows(20, seed=2, received_day=D2))
    store.append(rows(30, seed=1, received_day=D2))  # D1's batch retried after midnight
    steward = LakeSteward(store)

    def read(since: dt.date) -> tuple[set[dt.date], int]:
        con = duckdb.connect()
        try:
            steward.view(con, since)
            days = {
                r[0] for r in con.execute("SELECT DISTINCT received_day FROM lake_rows").fetchall()
            }
            n = con.execute(
                "SELECT count(*) FROM signals WHERE received_day >= $1", [since]
            ).fetchone()
            return days, int(n[0]) if n else 0
        finally:
            con.close()

    assert read(D2) == ({D1, D2}, 20)  # the retried ids were received on D1
    compact(store, D3)
    assert read(D2) == ({D2}, 20)
    assert read(D3) == (set(), 0)


class _Watched(LakeSteward):
    """The real lake steward, keeping the streams it opened (to see them closed)."""

    def __init__(self, store: LakeStore) -> None:
        super().__init__(store)
        self.streams: list[BatchStream] = []

    async def stream(self, sql: str, since: dt.date | None) -> BatchStream:
        opened = await super().stream(sql, since)
        self.streams.append(opened)
        return opened


@pytest.mark.slow
def test_an_export_the_client_leaves_closes_its_connection(tmp_path: Path) -> None:
    """An export read to its end, and one the client drops after its first chunk, both close
    their connection to the lake (no view, no file handle, no sort left behind)."""
    store = LakeStore(str(tmp_path / "lake"))
    base = rows(1_000, seed=5, received_day=D1)
    rng = random.Random(5)
    for _ in range(3):  # 3 commits of 40,000 fresh ids: the export is 3 batches
        ids = pa.array([rng.randbytes(16) for _ in range(40_000)], pa.binary(16))
        copies = pa.concat_tables([base] * 40)
        store.append(copies.set_column(0, "signal_id", ids))
    watched = _Watched(store)
    api = FastAPI()
    api.state.settings = _settings(tmp_path / "unused.duckdb", tmp_path / "backups")
    api.include_router(build_read_router(watched))
    with (
        serving_app(api, "steward") as url,
        httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as http,
    ):
        whole = http.get("/v1/signals/export", params={"format": "csv"}, headers=STEWARD_AUTH)
        assert whole.status_code == 200 and whole.content.count(b"\n") == 120_001
        with http.stream("GET", "/v1/signals/export", headers=STEWARD_AUTH) as partial:
            assert partial.status_code == 200
            next(partial.iter_raw())  # the first chunk, then the client goes away
        wait_until(lambda: all(s.closed for s in watched.streams), what="the export's close")
    assert len(watched.streams) == 2 and all(s.closed for s in watched.streams)
