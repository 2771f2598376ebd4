from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from client.ring import Ring
from contract.catalogue import load_catalogue
from contract.schema import Outcome, RingEntry

CAT = load_catalogue()
entries = st.builds(
    lambda tool, outcome: tool.ring_entries[outcome],
    st.sampled_from(list(CAT)),
    st.sampled_from(list(Outcome)),
)


@given(st.lists(entries, max_size=60))
def test_ring_keeps_exactly_the_last_ten_oldest_first(calls: list[RingEntry]) -> None:
    ring = Ring()
    for entry in calls:
        ring.record(entry)
    assert ring.snapshot() == tuple(calls[-10:])
    assert len(ring) == min(10, len(calls))


def test_ring_entries_are_prebuilt_and_shared() -> None:
    tool = CAT.get("read_note")
    assert tool is not None
    assert tool.ring_entries[Outcome.ok] is tool.ring_entries[Outcome.ok]
    assert tool.ring_entries[Outcome.failed] == RingEntry(
        tool=tool.tool_name, outcome=Outcome.failed
    )
