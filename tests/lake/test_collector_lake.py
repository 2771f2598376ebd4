"""The collector in lake mode, through the real HTTP API: an answer means committed.

A real uvicorn collector with ``lake_uri`` set appends each flush to the Delta table; the
answer comes only after the commit, so every acknowledged id is in the table the moment the
client reads its 200. Three collector processes on SeaweedFS, one SIGKILLed mid-load, clients
retrying on the others: after compaction every acknowledged signal is stored exactly once.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from pathlib import Path

import duckdb
import httpx
import pytest

from collector.lake.jobs import compact, retain
from collector.lake.shipper import ship_file
from collector.lake.store import LakeStore
from collector.settings import CollectorSettings
from lakedev.seaweed import LoopbackSeaweed
from scripts._lake_cluster import Collectors, random_signals, send_load
from tests._servers import HANG_S, running_collector
from tests.lake.conftest import rows


def _ids(store: LakeStore) -> list[str]:
    con = duckdb.connect()
    store.signals_relation(con)
    return [str(r[0]) for r in con.execute("SELECT signal_id FROM signals").fetchall()]


def _spooled(db_path: Path) -> set[str]:
    """The ids a stopped collector's file holds: not shipped yet, or sealed and waiting."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        found = con.execute(
            "SELECT CAST(signal_id AS VARCHAR) FROM signals UNION ALL "
            "SELECT CAST(signal_id AS VARCHAR) FROM lake_outbox"
        ).fetchall()
    finally:
        con.close()
    return {str(r[0]) for r in found}


def test_every_answer_follows_its_commit_and_reaches_the_lake(tmp_path: Path) -> None:
    """An answer means committed in the collector's own file (its spool); the shipper then
    moves every acknowledged signal to the lake, each once, and a stop ships the rest."""
    uri = str(tmp_path / "lake")
    db_path = tmp_path / "c.duckdb"
    settings = CollectorSettings(
        db_path=db_path, lake_uri=uri, rate_limit_enabled=False, lake_ship_interval_s=3600
    )
    store = LakeStore(uri)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    rng = random.Random(3)
    batches = [random_signals(rng, n, today) for n in (1, 5, 40, 200, 3)]
    with running_collector(settings) as url:

        async def send(items: list[dict[str, object]]) -> tuple[int, dict[str, int]]:
            async with httpx.AsyncClient(trust_env=False, timeout=HANG_S) as client:
                answer = await client.post(url + "/v1/signals", json={"signals": items})
            return answer.status_code, answer.json()

        async def all_at_once() -> list[tuple[int, dict[str, int]]]:
            return await asyncio.gather(*(send(b) for b in batches))

        results = asyncio.run(all_at_once())
        assert [r[0] for r in results] == [200] * len(batches)
        assert [r[1]["accepted"] for r in results] == [len(b) for b in batches]
        retry = httpx.post(
            url + "/v1/signals", json={"signals": batches[2]}, trust_env=False, timeout=HANG_S
        )
        assert retry.status_code == 200
        assert retry.json()["duplicates"] == 40  # the spool's own key, as in the file
        assert store.count() == 0  # an hour's interval: nothing shipped while it runs
    ids = _ids(store)
    assert len(ids) == len(set(ids)) == sum(len(b) for b in batches)
    assert store.count() == len(ids)
    assert _spooled(db_path) == set()  # the stop shipped everything, and the spool let go
    assert store.table().version() == 1  # one commit for five requests and a retry


def test_a_collector_keeps_appending_while_the_jobs_rewrite_and_delete(tmp_path: Path) -> None:
    """Compaction and retention commit file removals while collectors hold a live table: the
    collectors' next appends (today's, and a late one into the rewritten day) are answered
    200 and stored, never refused for the job's commit."""
    uri = str(tmp_path / "lake")
    settings = CollectorSettings(
        db_path=tmp_path / "c.duckdb", lake_uri=uri, rate_limit_enabled=False
    )
    store = LakeStore(uri)
    today = dt.datetime.now(dt.UTC).date()
    yesterday = today - dt.timedelta(days=1)
    rng = random.Random(5)
    sent: list[dict[str, object]] = []
    with running_collector(settings) as url:

        def post(items: list[dict[str, object]]) -> int:
            sent.extend(items)
            answer = httpx.post(
                url + "/v1/signals", json={"signals": items}, trust_env=False, timeout=HANG_S
            )
            return answer.status_code

        assert post(random_signals(rng, 20, today.isoformat())) == 200  # the live table
        store.append(rows(30, seed=4, received_day=yesterday))
        store.append(rows(30, seed=5, received_day=today - dt.timedelta(days=100)))
        compact(store, today)  # rewrites yesterday and the old day: files removed
        assert post(random_signals(rng, 20, today.isoformat())) == 200
        retain(store, today, 90, grace_hours=0)  # deletes the old day: files removed again
        assert post(random_signals(rng, 20, today.isoformat())) == 200
    ids = set(_ids(store))
    assert {str(s["signal_id"]) for s in sent} <= ids
    assert len(ids) == 60 + 30


def test_a_lake_collector_refuses_forged_arg_names_and_ships_none(tmp_path: Path) -> None:
    """Lake mode ingests through the same endpoint and rules: a signal repeating an argument
    name, or naming one its tool does not declare, is refused (422 ``invalid_arg_names``) with
    its batch; nothing of them is spooled or shipped, and the signal sent after them is."""
    uri = str(tmp_path / "lake")
    db_path = tmp_path / "c.duckdb"
    settings = CollectorSettings(
        db_path=db_path, lake_uri=uri, rate_limit_enabled=False, lake_ship_interval_s=3600
    )
    honest = random_signals(random.Random(7), 3, dt.datetime.now(dt.UTC).date().isoformat())
    note = {"name": "note_name", "type": "string", "size": "1-16"}
    path = {"name": "path", "type": "string", "size": "1-16"}
    with running_collector(settings) as url:
        for args, rule in (([note, note, note], "arg_once"), ([note, path], "arg_declared")):
            forged = dict(honest[0], tool_attempted="read_note", args=args)
            answer = httpx.post(
                url + "/v1/signals",
                json={"signals": [honest[1], forged]},
                trust_env=False,
                timeout=HANG_S,
            )
            assert answer.status_code == 422, answer.text
            assert answer.json()["code"] == "invalid_arg_names"
            assert [(e["pointer"], e["rule"]) for e in answer.json()["errors"]] == [
                ("/signals/1/args", rule)
            ]
        answer = httpx.post(
            url + "/v1/signals", json={"signals": [honest[2]]}, trust_env=False, timeout=HANG_S
        )
        assert answer.json() == {"accepted": 1, "duplicates": 0}
    assert _ids(LakeStore(uri)) == [honest[2]["signal_id"]]
    assert _spooled(db_path) == set()


@pytest.mark.slow
def test_three_collectors_on_seaweedfs_one_killed(seaweed: LoopbackSeaweed, tmp_path: Path) -> None:
    uri = seaweed.uri("cluster")
    env = {
        "LMCP_COLLECTOR_LAKE_S3_ENDPOINT": seaweed.endpoint,
        "LMCP_COLLECTOR_LAKE_S3_KEY_ID": seaweed.key_id,
        "LMCP_COLLECTOR_LAKE_S3_SECRET": seaweed.secret,
        "LMCP_COLLECTOR_LAKE_S3_ALLOW_HTTP": "true",
    }
    today = dt.datetime.now(dt.UTC).date()
    with Collectors(3, uri, env, tmp_path) as cluster:
        victim = cluster.members[0]

        def kill_midway(answered: int) -> None:
            if answered == 30:
                victim.kill()

        load = send_load(
            cluster.urls, signals=12_000, batch=100, senders=6, day=today.isoformat(),
            on_progress=kill_midway,
        )  # fmt: skip
        assert victim.proc.poll() is not None  # it died mid-load
        survivors = [m.proc.poll() for m in cluster.members[1:]]
        assert survivors == [None, None]
    assert load.acknowledged == load.sent and load.retries > 0
    store = LakeStore(uri, seaweed.storage_options)
    # The victim's disk survived it: what it acknowledged and had not shipped is shipped
    # from its file (as its restart would; ``lmcp lake ship --db``).
    ship_file(tmp_path / "collector0.duckdb", store)
    assert store.count() >= len(load.sent)
    compact(store, today + dt.timedelta(days=1))
    ids = _ids(store)
    assert len(ids) == len(set(ids)) == store.count()  # stored exactly once
    assert set(ids) == load.acknowledged


def test_the_shipper_ships_exactly_what_the_spool_stored(tmp_path: Path) -> None:
    """A flush the writer stored in the spool (``DuckDBStore``, Arrow columns) reaches the lake
    row for row: every id once."""
    from collector.db import signals_database
    from collector.flush import Flush
    from collector.lake.shipper import ship_file
    from collector.store import DuckDBStore
    from tests.lake.conftest import signals

    items = signals(600, seed=4)
    batches = [items[i : i + 150] for i in range(0, 600, 150)]
    day = dt.date(2026, 11, 30)
    path = tmp_path / "spool.duckdb"
    db = signals_database(path, threads=1)
    db.open()
    try:
        store = DuckDBStore(db.run_sync(lambda con: con.cursor()), owned=True)
        results = store.write(Flush(batches, [None] * len(batches)), day).results
        assert [r.accepted for r in results] == [150] * 4
        stored = db.run_sync(
            lambda con: con.execute("SELECT CAST(signal_id AS VARCHAR) FROM signals").fetchall()
        )
        store.close()
    finally:
        db.close()
    lake = LakeStore(str(tmp_path / "lake"))
    assert ship_file(path, lake) == 600
    con = duckdb.connect()
    lake.relation(con, "lake_rows")
    shipped = con.execute(
        "SELECT CAST(CAST(hex(signal_id) AS UUID) AS VARCHAR) FROM lake_rows"
    ).fetchall()
    assert sorted(shipped) == sorted(stored) and len(shipped) == 600
