"""k-suppression happens inside the SQL: property tests against a brute-force count.

Ring patterns and argument shapes are the riskiest aggregates (a rare sequence or a rare
combination of shapes can single a user out), so they are checked group by group: every group
with at least k signals is shown with its exact count, and no group below k is shown at all.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import analysis
from analysis import Filters, Question
from collector.releases.cubes import CUBES, SHAPE_ARGS
from contract.days import PeriodKind, period_end
from contract.schema import FrictionSignal
from tests.analysis.conftest import day, signal, write_signals
from tests.factories import carried_names
from tests.hypothesis_profiles import at_most

TOOLS = ("read_note", "list_notes", "send_email")
CLASSES = ("not_found", "timeout")
OUTCOMES = ("ok", "failed")
ARGS = (
    ("note_name", "string", "1-16"),
    ("note_name", "string", "0"),
    ("limit", "integer", None),
    ("to", "array", "1-16"),
)
ALL = Filters(start=day(1), end=day(3))
BIG = 10_000

ring_entry = st.tuples(st.sampled_from(TOOLS), st.sampled_from(OUTCOMES))


@st.composite
def signals(draw: st.DrawFn) -> list[FrictionSignal]:
    # A few templates, each repeated a few times: groups land on both sides of k.
    templates = draw(
        st.lists(
            st.tuples(
                st.sampled_from(TOOLS),
                st.sampled_from(CLASSES),
                st.lists(ring_entry, max_size=4),
                st.lists(st.sampled_from(ARGS), max_size=2, unique_by=lambda a: a[0]),
                st.sampled_from(("macos", "windows")),
                st.integers(1, 3),
                st.integers(1, 7),
            ),
            min_size=1,
            max_size=6,
        )
    )
    out: list[FrictionSignal] = []
    for tool, cls, ring, drawn, platform, d, copies in templates:
        args = [a for a in drawn if a[0] in carried_names(tool)]  # the collector stores no other
        out += [
            signal(day(d), tool=tool, error_class=cls, ring=ring, args=args, platform=platform)
            for _ in range(copies)
        ]
    return out


def _con(rows: Sequence[FrictionSignal]) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    write_signals(con, rows)
    return con


# Each example builds and queries a DuckDB dataset: a quarter of the ci budget.
PROPERTY = settings(max_examples=at_most(25), suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@PROPERTY
@given(rows=signals(), k=st.sampled_from([2, 3, 5]))
def test_ring_patterns_show_exactly_the_groups_of_at_least_k(
    rows: list[FrictionSignal], k: int
) -> None:
    expected: Counter[tuple[object, ...]] = Counter()
    for s in rows:
        ring = s.ring
        if len(ring) >= 2:
            p1 = ring[-2]
            expected[(2, None, None, p1.tool, p1.outcome, s.tool_attempted, s.error_class)] += 1
        if len(ring) >= 3:
            p1, p2 = ring[-2], ring[-3]
            expected[
                (3, p2.tool, p2.outcome, p1.tool, p1.outcome, s.tool_attempted, s.error_class)
            ] += 1
    with _con(rows) as con:
        answer = analysis.ring(con, ALL, k=k, limit=BIG)
    shown = {
        (r.calls, r.prev2_tool, r.prev2_outcome, r.prev1_tool, r.prev1_outcome, r.tool,
         r.error_class): r.n
        for r in answer.rows
    }  # fmt: skip
    assert shown == {
        tuple(str(v) if v is not None and not isinstance(v, int) else v for v in g): n
        for g, n in expected.items()
        if n >= k
    }


@pytest.mark.slow
@PROPERTY
@given(rows=signals(), k=st.sampled_from([2, 3, 5]))
def test_argument_shapes_show_exactly_the_groups_of_at_least_k(
    rows: list[FrictionSignal], k: int
) -> None:
    # The exact view counts the shapes cube's cells: the first SHAPE_ARGS arguments, over its
    # known domain (each tool's declared names and ``other``), as the release does.
    domain = set(CUBES["shapes"].cells())
    expected: Counter[tuple[str, str, str, str]] = Counter()
    for s in rows:
        for a in s.args[:SHAPE_ARGS]:
            size = "-" if a.size is None else a.size.value
            key = (s.tool_attempted.value, a.name.value, a.type.value, size)
            if key in domain:
                expected[key] += 1
    with _con(rows) as con:
        answer = analysis.shapes(con, ALL, k=k, limit=BIG)
    shown = {(r.tool, r.arg, r.arg_type, r.size): r.n for r in answer.rows}
    assert shown == {g: n for g, n in expected.items() if n >= k}


@pytest.mark.slow
@PROPERTY
@given(rows=signals(), k=st.sampled_from([2, 3, 5]))
def test_no_question_shows_a_count_below_k(rows: list[FrictionSignal], k: int) -> None:
    with _con(rows) as con:
        for question in Question:
            for row in analysis.ask(con, question, ALL, k=k, limit=BIG).rows:
                for name in ("n", "prev_n", "base_n", "platform_n", "tool_n"):
                    value = getattr(row, name, None)
                    # base_n == 0 means "no earlier group was shown", not a count of 0 < k
                    assert value is None or value >= k or (name == "base_n" and value == 0)


def test_a_unique_ring_pattern_is_hidden_until_k_users_share_it() -> None:
    rare = [("send_email", "failed"), ("list_notes", "ok"), ("read_note", "failed")]
    common = [("list_notes", "ok"), ("read_note", "failed")]
    base = [signal(day(1), ring=common) for _ in range(5)]
    for copies, visible in ((1, False), (4, False), (5, True)):
        rows = base + [signal(day(1), ring=rare) for _ in range(copies)]
        with _con(rows) as con:
            answer = analysis.ring(con, ALL)
        three = [r for r in answer.rows if r.calls == 3]
        assert bool(three) is visible
        assert all(r.prev2_tool == "send_email" for r in three)


def test_a_unique_shape_is_hidden_until_k_signals_share_it() -> None:
    for copies, visible in ((1, False), (4, False), (5, True)):
        rows = [
            signal(day(1), tool="read_file", args=[("path", "string", "1M+")])
            for _ in range(copies)
        ]
        with _con(rows) as con:
            answer = analysis.shapes(con, ALL)
        assert [(r.size, r.n) for r in answer.rows] == ([("1M+", copies)] if visible else [])


def test_today_is_not_special() -> None:
    # The period resolves to the week of the data's last day, not the wall clock: old copies
    # still answer (whole weeks: the cubes' periods).
    with _con([signal(dt.date(2020, 1, 1)) for _ in range(5)]) as con:
        answer = analysis.top(con)
    assert answer.period.end == period_end(PeriodKind.week, dt.date(2020, 1, 1))
    assert answer.period.start <= dt.date(2020, 1, 1)
    assert [r.n for r in answer.rows] == [5]
