"""The shipped front door (``deploy/haproxy.cfg``, Debian's haproxy) before N lake collectors.

A collector SIGKILLed under load: the clients see no failure (haproxy sends the requests
that died with it again, to another collector), and once the killed collector is back on its
own disk, the lake holds every acknowledged signal exactly once after compaction: 0 failed,
0 lost, 0 duplicated. A collector whose lake is unreachable gets no traffic.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import httpx
import pytest

from collector.lake.jobs import compact
from collector.lake.store import LakeStore
from lakedev.frontdoor import CONFIG, FrontDoor, find_haproxy, render
from lakedev.seaweed import LoopbackSeaweed
from scripts._lake_cluster import Collectors, send_load
from tests._servers import HANG_S, run_child

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_haproxy() is None, reason="no haproxy (make installs it)"),
]


def _compacted_ids(store: LakeStore) -> list[str]:
    con = duckdb.connect()
    try:
        store.relation(con)
        found = con.execute(
            "SELECT CAST(hex(signal_id) AS UUID)::VARCHAR FROM lake_rows WHERE compacted"
        ).fetchall()
        return [str(r[0]) for r in found]
    finally:
        con.close()


def test_the_shipped_configuration_is_valid_for_any_number_of_collectors(
    tmp_path: Path,
) -> None:
    for count in (1, 3, 5):
        config = tmp_path / f"haproxy{count}.cfg"
        config.write_text(render([f"127.0.0.1:{9000 + i}" for i in range(count)]))
        checked = run_child(
            [str(find_haproxy()), "-c", "-f", str(config)],
            env={"LMCP_FRONT_DOOR_BIND": "127.0.0.1:8999"},
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert config.read_text().count(" check\n") == count
    assert "retry-on" in CONFIG.read_text() and "option redispatch" in CONFIG.read_text()


def test_a_collector_killed_under_load_loses_and_doubles_nothing(
    seaweed: LoopbackSeaweed, tmp_path: Path
) -> None:
    uri = seaweed.uri("front-door")
    env = {
        "LMCP_COLLECTOR_LAKE_S3_ENDPOINT": seaweed.endpoint,
        "LMCP_COLLECTOR_LAKE_S3_KEY_ID": seaweed.key_id,
        "LMCP_COLLECTOR_LAKE_S3_SECRET": seaweed.secret,
        "LMCP_COLLECTOR_LAKE_S3_ALLOW_HTTP": "true",
        "LMCP_COLLECTOR_LAKE_SHIP_INTERVAL_S": "1",
    }
    today = dt.datetime.now(dt.UTC).date()
    with (
        Collectors(3, uri, env, tmp_path) as cluster,
        FrontDoor([m.address for m in cluster.members], folder=tmp_path) as door,
    ):
        victim = cluster.members[0]

        def kill_midway(answered: int) -> None:
            if answered == 25:
                victim.kill()

        load = send_load(
            [door.url], signals=8_000, batch=100, senders=6, day=today.isoformat(),
            on_progress=kill_midway,
        )  # fmt: skip
        assert victim.proc.poll() is not None  # it died mid-load
        cluster.restart(0)  # on its own disk: its shipper ships what it acknowledged
    # 0 failed: haproxy answered every request it took with 200 (it retried what the kill cut
    # off), and no error status reached a client. A client may still resend on a keep-alive
    # connection haproxy closed as it was reused (no status, never in haproxy's log).
    statuses = [line.split()[5] for line in (tmp_path / "haproxy.log").read_text().splitlines()
                if '"POST /v1/signals' in line]  # fmt: skip
    assert len(statuses) >= len(load.sent) // 100 and set(statuses) == {"200"}
    assert [why for why in load.failures if why.isdigit()] == []
    assert load.acknowledged == load.sent
    store = LakeStore(uri, seaweed.storage_options)
    assert store.count() >= len(load.sent)  # a cut-off request may be stored twice
    compact(store, today, open_day=True)
    ids = _compacted_ids(store)
    assert len(ids) == len(set(ids))  # 0 duplicated
    assert set(ids) == load.acknowledged  # 0 lost, nothing else


def test_a_collector_whose_lake_is_unreachable_gets_no_traffic(
    seaweed: LoopbackSeaweed, tmp_path: Path
) -> None:
    """One collector points at a store that is not there: /readyz says 503, haproxy marks it
    down, and every request lands on the healthy one."""
    healthy = {
        "LMCP_COLLECTOR_LAKE_S3_ENDPOINT": seaweed.endpoint,
        "LMCP_COLLECTOR_LAKE_S3_KEY_ID": seaweed.key_id,
        "LMCP_COLLECTOR_LAKE_S3_SECRET": seaweed.secret,
        "LMCP_COLLECTOR_LAKE_S3_ALLOW_HTTP": "true",
    }
    uri = seaweed.uri("half-down")
    today = dt.datetime.now(dt.UTC).date().isoformat()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    broken = Collectors(
        1, uri, dict(healthy, LMCP_COLLECTOR_LAKE_S3_ENDPOINT="http://127.0.0.1:9"),
        tmp_path / "b",
    )  # fmt: skip
    with Collectors(1, uri, healthy, tmp_path / "a") as good:
        try:
            bad = broken.start(ready=False).members[0]
            assert (
                httpx.get(bad.url + "/readyz", trust_env=False, timeout=HANG_S).status_code == 503
            )
            with FrontDoor([good.members[0].address, bad.address], folder=tmp_path) as door:
                # Each server starts up; the unready one is marked down after its checks fail.
                door.wait_marked_down(2)
                load = send_load([door.url], signals=600, batch=20, senders=3, day=today)
        finally:
            broken.stop()
    assert load.retries == 0 and load.acknowledged == load.sent
    con = duckdb.connect(str(tmp_path / "b" / "collector0.duckdb"), read_only=True)
    try:  # the unready collector never stored a signal (its last ship failed: kept here)
        assert con.execute("SELECT count(*) FROM signals").fetchall() == [(0,)]
    finally:
        con.close()
