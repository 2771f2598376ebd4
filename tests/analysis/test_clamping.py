"""One clamping rule (``analysis._cells.breakdown``): noise can push a released sum below 0; a
view shows a total as the sum of its cells (never below 0: no bias from clamping its parts) and
its parts as whole numbers never below 0 that add up to it -- so a tool's app states add up to
its ``tool_n``, a platform's tools to its ``platform_n``, a day's friction types to its ``all``,
and the shares of a breakdown to 100 %.

Property tests over random noisy releases (cells anywhere from well below 0 up), asked through
the real derivations (``ask_released``) of a DuckDB holding them."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from analysis import Filters, Question
from analysis._cells import Acc, breakdown
from analysis._released import ask_released
from analysis._rows import AppRow, AttemptRow, IntentRow, PlatformRow, TrendRow
from collector.db import migrate
from collector.releases.cubes import CUBES
from collector.releases.store import KEY_SEP
from tests.hypothesis_profiles import at_most

D0 = dt.date(2026, 3, 2)  # a Monday: one released week, D0 .. D0 + 6
WEEK = Filters(start=D0, end=D0 + dt.timedelta(days=6))
#: Released counts as noise leaves them: from far below 0 (an empty cell's noise) upwards.
_N = st.integers(-80, 400)


@given(parts=st.dictionaries(st.text(max_size=3), st.tuples(st.floats(-1e4, 1e4),
                                                             st.floats(0, 1e4))))  # fmt: skip
def test_the_shown_parts_add_up_to_the_shown_total(parts: dict[str, tuple[float, float]]) -> None:
    shown, total = breakdown({k: Acc(n, var) for k, (n, var) in parts.items()})
    assert all(a.n >= 0 and a.n == round(a.n) for a in shown.values())
    assert total.n == sum(a.n for a in shown.values())
    # The total is the cells' own sum (never below 0), not a sum of clamped parts...
    assert total.n == max(0, round(sum(n for n, _ in parts.values())))
    # ... and no part grows to make up for the others' negative noise.
    assert all(shown[k].n <= max(0.0, n) + 1.5 for k, (n, _) in parts.items())
    assert total.var == pytest.approx(sum(var for _, var in parts.values()))
    assert [a.var for a in shown.values()] == [var for _, var in parts.values()]


def test_without_noise_the_parts_are_the_counts() -> None:
    exact = {"a": Acc(300.0, 0.0), "b": Acc(0.0, 0.0), "c": Acc(41.0, 0.0)}
    shown, total = breakdown(exact)
    assert {k: a.n for k, a in shown.items()} == {"a": 300.0, "b": 0.0, "c": 41.0}
    assert total.n == 341.0


def _domain(cube: str) -> list[tuple[str, ...]]:
    return list(CUBES[cube].cells())


def _store(
    cells: dict[str, list[tuple[int, int]]],
) -> tuple[duckdb.DuckDBPyConnection, dict[str, dict[tuple[str, ...], int]]]:
    """One released week of every cube in ``cells`` (the daily cube: its seven days), sigma 20,
    holding ``(index into the cube's domain, n)`` cells (a day offset for the daily cube); and
    each cube's stored counts summed per key over the week."""
    con = duckdb.connect(":memory:")
    migrate(con)
    stored: dict[str, dict[tuple[str, ...], int]] = {}
    con.execute("INSERT INTO release_periods VALUES ('friction', $1, 'week', 20.0, 0, 0, 't')",
                [D0])  # fmt: skip
    for cube, values in cells.items():
        kind = CUBES[cube].kind.value
        days = [D0 + dt.timedelta(days=d) for d in range(7)] if kind == "day" else [D0]
        for day in days:
            con.execute("INSERT INTO release_periods VALUES ($1, $2, $3, 20.0, 0, 0, 't')",
                        [cube, day, kind])  # fmt: skip
        domain = _domain(cube)
        rows: dict[tuple[dt.date, str], int] = {}
        for i, n in values:
            day = days[i % len(days)]
            rows[(day, KEY_SEP.join(domain[i % len(domain)]))] = n
        con.executemany(
            "INSERT INTO release_cells VALUES ($1, $2, $3, $4)",
            [[cube, day, key, n] for (day, key), n in rows.items()],
        )
        for (_, key), n in rows.items():
            sums = stored.setdefault(cube, {})
            sums[tuple(key.split(KEY_SEP))] = sums.get(tuple(key.split(KEY_SEP)), 0) + n
    return con, stored


def _cells(cube: str) -> st.SearchStrategy[list[tuple[int, int]]]:
    # Few keys, so that each group holds several cells, some below 0.
    return st.lists(st.tuples(st.integers(0, 40), _N), min_size=1, max_size=25)


def _adds_up(groups: dict[str, list[tuple[int, float, int]]]) -> None:
    """Each group's shown rows (n, share, the total shown beside them) add up to that total,
    and their shares to 100 % (each rounded to 0.1)."""
    for name, rows in groups.items():
        totals = {total for _, _, total in rows}
        assert totals == {sum(n for n, _, _ in rows)}, (name, rows)
        if sum(n for n, _, _ in rows) > 0:
            assert abs(sum(s for _, s, _ in rows) - 100.0) <= 0.05 * len(rows) + 1e-9, rows


@pytest.mark.slow
@settings(max_examples=at_most(40), suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(apps=_cells("apps"), platforms=_cells("platforms"), daily=_cells("daily"),
       intents=_cells("intents"), attempts=_cells("attempts"))  # fmt: skip
@example(  # the walkthrough: a tool whose app states' noise sums below 0 in one state
    apps=[(0, 300), (1, -60), (2, 40), (3, 5)],
    platforms=[(0, 10)],
    daily=[(0, 10)],
    intents=[(0, 10)],
    attempts=[(0, 10)],
)
def test_every_breakdown_shows_rows_that_add_up_to_its_total(
    apps: list[tuple[int, int]],
    platforms: list[tuple[int, int]],
    daily: list[tuple[int, int]],
    intents: list[tuple[int, int]],
    attempts: list[tuple[int, int]],
) -> None:
    con, stored = _store({"apps": apps, "platforms": platforms, "daily": daily,
                          "intents": intents, "attempts": attempts})  # fmt: skip
    try:

        def ask(question: Question) -> tuple[object, ...]:
            return ask_released(con, question, WEEK, limit=1000).rows

        by_tool: dict[str, list[tuple[int, float, int]]] = defaultdict(list)
        for r in ask(Question.apps):
            assert isinstance(r, AppRow)
            by_tool[r.tool].append((r.n, r.share_pct, r.tool_n))
        _adds_up(by_tool)
        # Each total is its cells' own sum, never a sum of clamped parts.
        for tool, shown in by_tool.items():
            cells = sum(n for key, n in stored["apps"].items() if key[0] == tool)
            assert shown[0][2] == max(0, cells), (tool, shown)
        by_platform: dict[str, list[tuple[int, float, int]]] = defaultdict(list)
        for r in ask(Question.platforms):
            assert isinstance(r, PlatformRow)
            by_platform[r.platform].append((r.n, r.share_pct, r.platform_n))
        _adds_up(by_platform)
        for question in (Question.intents, Question.attempts):
            rows = [r for r in ask(question) if isinstance(r, IntentRow | AttemptRow)]
            total = sum(r.n for r in rows)
            _adds_up({question.value: [(r.n, r.share_pct, total) for r in rows]})
        days: dict[dt.date, dict[str, int]] = defaultdict(dict)
        for r in ask(Question.trends):
            assert isinstance(r, TrendRow) and r.n >= 0
            days[r.day][r.series] = r.n
        for day, series in days.items():
            parts = sum(n for s, n in series.items() if s != "all")
            assert series["all"] == parts, (day, series)
    finally:
        con.close()
