"""One definition of each question: with the noise off, the team's answer is the exact one.

The released file below stores, for every (cube, period), the exact cells with sigma 0 (every
cell of a known domain, the present cells of the thresholded cube) -- a release without noise.
Over every question, filter and period, the team's derivation over those stored cells equals
the steward's derivation over the exact cells counted from ``signals``.
"""

from __future__ import annotations

import datetime as dt
import functools
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis._cells import (
    RELEASED_QUESTIONS,
    ExactSource,
    Noisy,
    ReleasedSource,
    coverage_of,
    released_span,
)
from analysis._filters import FilterError, Filters, Version
from analysis._period import NotCovered, resolve
from analysis._questions import Question
from analysis._released import derive
from collector.releases.cubes import CUBES
from collector.releases.mechanism import Calibration
from collector.releases.store import Draw, count_period, released_periods, store_period
from contract.days import period_end, periods_between
from contract.schema import Platform, ToolName
from tests.hypothesis_profiles import at_most


@pytest.fixture(scope="module")
def noiseless(
    synth_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The synthetic file with its releases replaced by noiseless ones of the same periods."""
    path = tmp_path_factory.mktemp("noiseless") / "synth.duckdb"
    shutil.copy(synth_path, path)
    con = duckdb.connect(str(path))
    periods = {name: released_periods(con, name) for name in CUBES}
    con.execute("DELETE FROM release_cells")
    con.execute("DELETE FROM release_periods")
    for name, days in periods.items():
        cube = CUBES[name]
        for day in days:
            counts = count_period(con, name, day).counts
            keys = sorted(counts) if cube.thresholded else cube.cells()
            cal = Calibration(rho=1.0, delta=0.0, scale=0.0, threshold=0, bounds=cube.bounds(8))
            store_period(con, Draw(name, day, cal, [(k, counts.get(k, 0)) for k in keys]))
    yield con
    con.close()


class _Cached:
    """``ExactSource`` memoised per period, over the periods the file released (a period
    outside the retention window has signals of only some of its days and no release)."""

    source = "exact"

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._exact = ExactSource(con)
        self._released = {name: set(released_periods(con, name)) for name in CUBES}

    @functools.cache  # noqa: B019 -- one instance per test module
    def _period(self, cube: str, day: dt.date) -> tuple[Noisy, ...]:
        return tuple(self._exact.cells(cube, day, day))

    def cells(self, cube: str, start: dt.date, end: dt.date) -> list[Noisy]:
        kind = CUBES[cube].kind
        days = [d for d in periods_between(kind, start, end) if d in self._released[cube]]
        return [c for day in days for c in self._period(cube, day)]


_TOOLS = st.sampled_from([None, ToolName.read_note, ToolName.search_files, ToolName.send_email])
_PLATFORMS = st.sampled_from([None, *Platform])
_VERSIONS = st.sampled_from([None, Version(1), Version(1, 4), Version(1, 4, 1)])


@settings(
    max_examples=at_most(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    question=st.sampled_from(RELEASED_QUESTIONS),
    tool=_TOOLS,
    platform=_PLATFORMS,
    version=_VERSIONS,
    back=st.integers(min_value=0, max_value=20),
    days=st.integers(min_value=1, max_value=28),
    limit=st.integers(min_value=1, max_value=30),
)
def test_without_noise_every_released_answer_equals_the_exact_answer(
    noiseless: duckdb.DuckDBPyConnection,
    question: Question,
    tool: ToolName | None,
    platform: Platform | None,
    version: Version | None,
    back: int,
    days: int,
    limit: int,
) -> None:
    filters = Filters(platform=platform, version=version, tool=tool)
    span = released_span(noiseless)
    assert span is not None
    end = span.through - dt.timedelta(days=back)
    try:  # the days both are asked about: the released weeks of those asked
        cov = resolve(Filters(start=end - dt.timedelta(days=days - 1), end=end), span)
    except NotCovered:
        return  # before the retention window: no release to compare
    exact = _exact_source(noiseless)
    try:
        released = derive(ReleasedSource(noiseless), question, filters, cov, limit)
    except FilterError as exc:
        with pytest.raises(FilterError) as same:
            derive(exact, question, filters, cov, limit)
        assert str(same.value) == str(exc)
        return
    answer = derive(exact, question, filters, cov, limit)
    assert released.rows == answer.rows
    assert released.period == answer.period and released.note == answer.note
    assert all(getattr(r, "moe", 0) == 0 for r in released.rows)


@functools.cache
def _exact_source(con: duckdb.DuckDBPyConnection) -> _Cached:
    return _Cached(con)


def test_the_noiseless_file_releases_every_period_it_had(
    noiseless: duckdb.DuckDBPyConnection,
) -> None:
    """The comparison above is not vacuous: every question has rows over the default period."""
    cov = coverage_of(noiseless, Filters())
    assert cov.period.end == period_end(CUBES["friction"].kind, cov.period.end)
    for q in RELEASED_QUESTIONS:
        assert derive(ReleasedSource(noiseless), q, Filters(), cov, 20).rows, q
