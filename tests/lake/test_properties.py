"""Property: whatever the batching, order, retries and arrival days, a compacted lake holds
each id once, at the earliest day it arrived, in files identical to those of a lake that
received each signal exactly once."""

from __future__ import annotations

import datetime as dt
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collector.lake.jobs import compact
from collector.lake.store import LakeStore
from tests.hypothesis_profiles import at_most
from tests.lake.conftest import DAY, rows

pytestmark = pytest.mark.slow

POOL = rows(24, seed=11)
DAYS = (DAY, DAY + dt.timedelta(days=1))
TODAY = DAY + dt.timedelta(days=2)

batch = st.tuples(st.sampled_from(DAYS), st.lists(st.integers(0, len(POOL) - 1), min_size=1))


def _rows(indices: list[int], day: dt.date) -> pa.Table:
    table = POOL.take(pa.array(indices, pa.int64()))
    column = table.schema.get_field_index("received_day")
    return table.set_column(column, "received_day", pa.array([day] * len(indices), pa.date32()))


def _files(store: LakeStore) -> dict[str, pa.Table]:
    out = {}
    for uri in store.table().file_uris():
        path = uri.removeprefix("file://")
        out[path.split("/")[-2]] = pq.read_table(path)
    return out


# Each example writes and compacts two Delta tables on disk.
@settings(max_examples=at_most(12), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(batch, min_size=1, max_size=6))
def test_compaction_is_independent_of_arrival(batches: list[tuple[dt.date, list[int]]]) -> None:
    earliest: dict[int, dt.date] = {}
    for day, indices in batches:
        for i in indices:
            earliest[i] = min(earliest.get(i, day), day)
    with tempfile.TemporaryDirectory() as root:
        arrived, once = LakeStore(f"{root}/arrived"), LakeStore(f"{root}/once")
        for day, indices in batches:
            arrived.append(_rows(indices, day))
        for day in DAYS:
            mine = sorted(i for i, d in earliest.items() if d == day)
            if mine:
                once.append(_rows(mine, day))
        compact(arrived, TODAY)
        compact(once, TODAY)
        assert arrived.count() == len(earliest)
        got, want = _files(arrived), _files(once)
        assert got.keys() == want.keys()
        for key in want:
            assert got[key].equals(want[key])
