"""Three processes commit to one table at once: no commit is lost or overwritten.

Every append must become exactly one version, and every row of every append must be in the
table at the end -- on a folder and on SeaweedFS's S3 (conditional writes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from collector.lake.store import LakeStore
from lakedev.seaweed import LoopbackSeaweed
from tests.lake.conftest import rows

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PROCESSES, COMMITS, ROWS = 3, 12, 40


def _race(store: LakeStore) -> None:
    store.create()  # version 0, before the race (as a collector does at start)
    env = dict(os.environ, LAKE_OPTIONS=json.dumps(store.storage_options), PYTHONPATH=str(REPO))
    start_at = time.time() + 4.0  # every process imported and ready before it
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.lake._committer",
                store.uri,
                str(seed),
                str(COMMITS),
                str(ROWS),
                str(start_at),
            ],
            cwd=REPO,
            env=env,
        )  # fmt: skip
        for seed in range(1, PROCESSES + 1)
    ]
    for proc in procs:
        assert proc.wait(timeout=180) == 0


def _check(store: LakeStore) -> None:
    table = store.table()
    assert table.version() == PROCESSES * COMMITS  # one version per append, none overwritten
    appends = [h for h in table.history() if h.get("operation") == "WRITE"]
    assert len(appends) == PROCESSES * COMMITS
    expected: set[bytes] = set()
    for seed in range(1, PROCESSES + 1):
        for i in range(COMMITS):
            ids = rows(ROWS, seed=seed * 100_000 + i).column("signal_id").to_pylist()
            expected.update(ids)
    con = duckdb.connect()
    store.relation(con, "lake_rows")
    stored = [bytes(r[0]) for r in con.execute("SELECT signal_id FROM lake_rows").fetchall()]
    assert len(stored) == PROCESSES * COMMITS * ROWS
    assert set(stored) == expected


def test_three_processes_on_a_folder(tmp_path: Path) -> None:
    store = LakeStore(str(tmp_path / "lake"))
    _race(store)
    _check(store)


def test_three_processes_on_seaweedfs_s3(seaweed: LoopbackSeaweed) -> None:
    store = LakeStore(seaweed.uri("race"), seaweed.storage_options)
    _race(store)
    _check(store)
