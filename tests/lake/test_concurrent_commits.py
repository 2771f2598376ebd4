"""Three processes commit to one table at once: no commit is lost or overwritten.

Every append must become exactly one version, and every row of every append must be in the
table at the end -- on a folder and on SeaweedFS's S3 (conditional writes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import duckdb
import pytest

from collector.lake.store import LakeStore
from lakedev.seaweed import LoopbackSeaweed
from tests._servers import child_process
from tests.lake.conftest import rows

pytestmark = pytest.mark.slow

PROCESSES, COMMITS, ROWS = 3, 12, 40


def _race(store: LakeStore) -> None:
    store.create()  # version 0, before the race (as a collector does at start)
    env = dict(os.environ, LAKE_OPTIONS=json.dumps(store.storage_options))
    with ExitStack() as stack:
        children = [
            stack.enter_context(
                child_process(
                    [
                        sys.executable,
                        "-m",
                        "tests.lake._committer",
                        store.uri,
                        str(seed),
                        str(COMMITS),
                        str(ROWS),
                    ],
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
            for seed in range(1, PROCESSES + 1)
        ]
        # The start line goes out once every process has imported and prepared its batches
        # (its own "ready"), however long that took: the commits then overlap.
        for child in children:
            assert child.popen.stdout is not None
            assert child.popen.stdout.readline().strip() == "ready"
        for child in children:
            assert child.popen.stdin is not None
            child.popen.stdin.write("go\n")
            child.popen.stdin.flush()
        for child in children:
            assert child.popen.wait() == 0


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
