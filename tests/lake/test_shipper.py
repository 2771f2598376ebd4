"""The spool and the shipper: every acknowledged signal reaches the lake once, in few commits.

The attacks are on the seam between the collector's file and the lake: a crash between the
lake's commit and the spool's clean-up (a replay), flushes committing while a batch seals,
a lake that cannot be reached at start or stops being reachable, and traffic that would
make one commit per flush.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import random
import shutil
import time
from pathlib import Path

import duckdb
import httpx
import pytest

from collector.db import signals_database
from collector.flush import Flush
from collector.lake.shipper import Shipper, ship_file
from collector.lake.spool import Spool
from collector.lake.store import LakeStore
from collector.settings import CollectorSettings
from collector.store import DuckDBStore
from scripts._lake_cluster import random_signals
from tests._servers import HANG_S, running_collector
from tests.lake.conftest import DAY, signals


def _lake_ids(store: LakeStore) -> list[str]:
    con = duckdb.connect(":memory:")
    try:
        store.relation(con)
        found = con.execute("SELECT CAST(hex(signal_id) AS UUID)::VARCHAR FROM lake_rows")
        return [str(r[0]) for r in found.fetchall()]
    finally:
        con.close()


def _spool_with(path: Path, count: int, seed: int = 1) -> list[str]:
    """A stopped collector's file holding ``count`` signals (written as the writer does)."""
    db = signals_database(path, threads=1)
    db.open()
    try:
        batch = signals(count, seed=seed)
        store = DuckDBStore(db.run_sync(lambda con: con.cursor()), owned=True)
        store.write(Flush([batch], [None]), DAY)
        store.close()
    finally:
        db.close()
    return [str(s.signal_id) for s in batch]


def test_a_batch_replayed_after_its_commit_is_stored_once(tmp_path: Path) -> None:
    """A crash after the lake committed a batch and before the spool let it go: the next
    ship finds the batch's transaction in the lake and does not append it again."""
    ids = _spool_with(tmp_path / "c.duckdb", 30)
    lake = LakeStore(str(tmp_path / "lake"))
    db = signals_database(tmp_path / "c.duckdb", threads=1)
    db.open()
    try:
        spool = Spool(db.run_sync)
        batch = spool.seal()
        assert batch == 1 and spool.pending_rows() == 0
        lake.append(spool.rows(batch), txn=(spool.app_id, batch))  # ... and the crash
        assert spool.batches() == [(1, 30)]
        assert Shipper(Spool(db.run_sync), LakeStore(lake.uri)).ship() == 0
        assert spool.batches() == []
    finally:
        db.close()
    assert sorted(_lake_ids(lake)) == sorted(ids)
    assert ship_file(tmp_path / "c.duckdb", lake) == 0  # nothing left: nothing again


def test_a_stopped_collectors_file_is_shipped_by_the_cli_once(tmp_path: Path) -> None:
    ids = _spool_with(tmp_path / "c.duckdb", 12, seed=4)
    lake = LakeStore(str(tmp_path / "lake"))
    assert ship_file(tmp_path / "c.duckdb", lake) == 12
    assert ship_file(tmp_path / "c.duckdb", lake) == 0
    assert sorted(_lake_ids(lake)) == sorted(ids)


def test_a_batch_is_written_in_id_order_not_arrival_order(tmp_path: Path) -> None:
    _spool_with(tmp_path / "c.duckdb", 200, seed=9)
    lake = LakeStore(str(tmp_path / "lake"))
    ship_file(tmp_path / "c.duckdb", lake)
    ids = _lake_ids(lake)
    assert ids == sorted(ids)  # uuid text order is byte order


def test_the_shipper_commits_once_per_interval_whatever_the_flushes(tmp_path: Path) -> None:
    """100 flushes, four an interval, each followed by one of the shipper's rounds, on a clock
    the test moves: one commit per interval that passed (25), not one per flush (100)."""
    lake = LakeStore(str(tmp_path / "lake"))
    db = signals_database(tmp_path / "c.duckdb", threads=1)
    db.open()
    now = [0.0]
    try:
        shipper = Shipper(Spool(db.run_sync), lake, interval_s=1.0, clock=lambda: now[0])
        store = DuckDBStore(db.run_sync(lambda con: con.cursor()), owned=True)
        sent: list[str] = []
        for i in range(100):
            batch = signals(3, seed=100 + i)
            store.write(Flush([batch], [None]), DAY)
            sent += [str(s.signal_id) for s in batch]
            now[0] += 0.25
            shipper._round()  # what the shipper's thread does at each poll
        store.close()
    finally:
        db.close()
    assert lake.table().version() == 25  # version 0 creates the table
    assert sorted(_lake_ids(lake)) == sorted(sent)


@pytest.mark.slow
def test_every_acknowledged_signal_reaches_the_lake_once_in_few_commits(tmp_path: Path) -> None:
    """200 requests from 16 senders while the shipper seals every 0.5 s: the lake holds each
    acknowledged id exactly once (none lost or doubled at a seal), and each commit is one
    sealed batch, not a flush (the test above: seals follow the interval)."""
    uri = str(tmp_path / "lake")
    settings = CollectorSettings(
        db_path=tmp_path / "c.duckdb", lake_uri=uri, rate_limit_enabled=False,
        lake_ship_interval_s=0.5,
    )  # fmt: skip
    today = dt.datetime.now(dt.UTC).date().isoformat()
    rng = random.Random(11)
    batches = [random_signals(rng, rng.randint(1, 20), today) for _ in range(200)]
    with running_collector(settings) as url:

        async def send_all() -> list[int]:
            gate = asyncio.Semaphore(16)
            async with httpx.AsyncClient(trust_env=False, timeout=HANG_S) as client:

                async def send(items: list[dict[str, object]]) -> int:
                    async with gate:
                        answer = await client.post(url + "/v1/signals", json={"signals": items})
                        return answer.status_code

                return await asyncio.gather(*(send(b) for b in batches))

        assert asyncio.run(send_all()) == [200] * len(batches)
    ids = _lake_ids(LakeStore(uri))
    assert sorted(ids) == sorted(str(s["signal_id"]) for b in batches for s in b)
    with duckdb.connect(str(settings.db_path), read_only=True) as con:
        (app_id,) = con.execute("SELECT app_id FROM lake_spool").fetchone() or ("",)
    table = LakeStore(uri).table()
    # Each commit records its sealed batch's number; batches are numbered 1, 2, ... by seal.
    assert table.version() == table.transaction_version(app_id), "a commit that is no seal"


def test_a_collector_starts_and_answers_503_while_its_lake_is_unreachable(
    tmp_path: Path,
) -> None:
    """The lake cannot be reached at start (its folder's parent is a file): the collector
    starts, readiness says 503, signals are acknowledged into its file; once the lake can
    be reached, readiness turns 200 and the signals are shipped. A lake lost later turns
    readiness 503 again."""
    blocker = tmp_path / "blocked"
    blocker.write_text("not a folder")
    uri = str(blocker / "lake")
    settings = CollectorSettings(
        db_path=tmp_path / "c.duckdb", lake_uri=uri, rate_limit_enabled=False,
        lake_ship_interval_s=0.2,
    )  # fmt: skip
    items = random_signals(random.Random(2), 5, dt.datetime.now(dt.UTC).date().isoformat())
    with (
        running_collector(settings) as url,
        httpx.Client(trust_env=False, timeout=HANG_S) as client,
    ):
        assert client.get(url + "/readyz").status_code == 503
        assert client.post(url + "/v1/signals", json={"signals": items}).status_code == 200
        blocker.unlink()
        while client.get(url + "/readyz").status_code != 200:
            time.sleep(0.05)
        while len(_lake_ids(LakeStore(uri))) < len(items):
            time.sleep(0.05)
        shutil.rmtree(blocker)
        blocker.write_text("gone again")
        more = random_signals(random.Random(3), 3, dt.datetime.now(dt.UTC).date().isoformat())
        assert client.post(url + "/v1/signals", json={"signals": more}).status_code == 200
        while client.get(url + "/readyz").status_code != 503:
            time.sleep(0.05)
        blocker.unlink()
        while client.get(url + "/readyz").status_code != 200:
            time.sleep(0.05)
    assert sorted(_lake_ids(LakeStore(uri))) == sorted(str(s["signal_id"]) for s in more)
