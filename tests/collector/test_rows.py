"""The pure write-path core: ring context, version split, and the Arrow table."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from client.schema import FrictionSignal, RingEntry
from collector.rows import ARROW_SCHEMA, ring_context, split_version, to_arrow
from tests.collector.conftest import expected_row, ring_entries, signals


@settings(max_examples=200, deadline=None)
@given(st.lists(ring_entries, max_size=10))
def test_ring_context_is_the_two_calls_before_the_last(ring: list[RingEntry]) -> None:
    prev1, prev2 = ring_context(ring)
    assert prev1 == (ring[-2] if len(ring) >= 2 else None)
    assert prev2 == (ring[-3] if len(ring) >= 3 else None)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 999), st.integers(0, 999), st.integers(0, 9999))
def test_split_version_inverts_formatting(major: int, minor: int, patch: int) -> None:
    assert split_version(f"{major}.{minor}.{patch}") == (major, minor, patch)


@settings(max_examples=50, deadline=None)
@given(st.lists(signals, min_size=1, max_size=20))
def test_arrow_table_holds_every_field(batch: list[FrictionSignal]) -> None:
    table = to_arrow(batch)
    assert table.schema == ARROW_SCHEMA
    rows = table.to_pylist()
    assert len(rows) == len(batch)
    for row, signal in zip(rows, batch, strict=True):
        assert row == expected_row(signal)
