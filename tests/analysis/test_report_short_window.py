"""The report renders whatever the retention window holds: a trend of any length, with or without
a spike, draws a chart of a real size (SVG and PNG), and ``lmcp analysis report --png-dir``
writes one picture per question for a window of one released week -- where an answer is empty,
its picture says so. A window with no released week (released days only, or nothing released)
is no period a report covers: the command says so and what it waits for (the open week is never
shown, ``analysis._period``)."""

from __future__ import annotations

import datetime as dt
import re
import struct
from pathlib import Path

import duckdb
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from analysis import synthesize
from analysis._charts import chart_png, chart_svg
from analysis._filters import Filters, Period
from analysis._questions import Answer, Question
from analysis._released import RELEASED_QUESTIONS
from analysis._rows import Row, TrendRow
from analysis.cli import app
from collector.releases.store import release_closed_periods
from collector.retention import purge_expired
from contract.accountant import ReleasePlan
from tests.hypothesis_profiles import at_most

#: A Sunday: the newest closed week ends with the data.
END = dt.date(2026, 6, 28)
TODAY = END + dt.timedelta(days=3)
#: Signals over the 90 days up to ``END``, about 220 a day: enough for rows above the noise.
SIGNALS = 20_000
#: Retention windows: one released week and its days; released days but no closed week;
#: nothing released at all.
WINDOWS = {"one_week": 10, "days_only": 4, "nothing_released": 1}
#: No chart is this many pixels across or down (the broken trend chart was 1.8e308).
SANE_PX = 5_000
SERIES = ["all", "cannot_complete", "repeated_failure", "task_abandoned", "workaround_needed"]


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "a PNG"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk comes first
    return int(width), int(height)


def _svg_sizes(markup: str) -> list[tuple[float, float]]:
    return [
        (float(w), float(h))
        for w, h in re.findall(r'<svg[^>]*? width="([^"]+)" height="([^"]+)"', markup)
    ]


def _trend_answer(rows: list[TrendRow]) -> Answer[Row]:
    period = Period(END - dt.timedelta(days=27), END)
    return Answer(Question.trends, period, None, Filters(), tuple(rows), "released")


@settings(max_examples=at_most(25))
@given(
    days=st.integers(1, 28),
    series=st.lists(st.sampled_from(SERIES), min_size=1, max_size=3, unique=True),
    spiked=st.sets(st.integers(0, 27), max_size=3),
    n=st.integers(0, 5_000),
)
# A window too short for any baseline: no day can spike (the case that had no size).
@example(days=10, series=["all"], spiked=set(), n=300)
@example(days=1, series=["all"], spiked=set(), n=0)
def test_a_trend_of_any_length_draws_a_chart_of_a_real_size(
    days: int, series: list[str], spiked: set[int], n: int
) -> None:
    rows = [
        TrendRow(END - dt.timedelta(days=d), s, n + 7 * d, 40, None, None, d in spiked)
        for d in range(days)
        for s in series
    ]
    answer = _trend_answer(rows)
    width, height = _png_size(chart_png(answer))
    assert 0 < width < SANE_PX and 0 < height < SANE_PX
    svg = chart_svg(answer)
    assert svg is not None
    assert [0 < w < SANE_PX and 0 < h < SANE_PX for w, h in _svg_sizes(svg)] == [True]


def test_an_empty_answer_draws_its_reason() -> None:
    none_above = _trend_answer([])
    unavailable: Answer[Row] = Answer(
        Question.trends, none_above.period, None, Filters(), (), "released",
        unavailable="the trend has no version breakdown",
    )  # fmt: skip
    pictures = [chart_png(a) for a in (none_above, unavailable)]
    for png in pictures:
        width, height = _png_size(png)
        assert 0 < width < SANE_PX and 0 < height < SANE_PX
    assert pictures[0] != pictures[1], "each says its own reason"


@pytest.fixture(scope="module")
def synthesised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("short") / "all.duckdb"
    assert synthesize(path, SIGNALS, end_day=END) == SIGNALS
    return path


def _window(source: Path, folder: Path, retention_days: int) -> Path:
    """``source`` as a collector with that retention would hold it on ``TODAY``."""
    path = folder / f"window-{retention_days}.duckdb"
    path.write_bytes(source.read_bytes())
    with duckdb.connect(str(path)) as con:
        purge_expired(con, TODAY, retention_days)
        release_closed_periods(con, TODAY, ReleasePlan(), retention_days=retention_days)
    return path


@pytest.mark.parametrize("window", sorted(WINDOWS))
def test_the_report_and_its_pngs_render_for_a_short_window(
    window: str, synthesised: Path, tmp_path: Path
) -> None:
    db = _window(synthesised, tmp_path, WINDOWS[window])
    page, pngs = tmp_path / "triage.html", tmp_path / "img"
    result = CliRunner().invoke(
        app, ["report", "--db", str(db), "--out", str(page), "--png-dir", str(pngs)]
    )
    if window != "one_week":  # no released week: nothing to report, and why
        assert result.exit_code == 1 and not page.exists()
        assert "nothing is released yet" in result.output, result.output
        return
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in pngs.iterdir())
    assert written == sorted(f"triage-{q.value}.png" for q in RELEASED_QUESTIONS)
    for name in written:
        width, height = _png_size((pngs / name).read_bytes())
        assert 0 < width < SANE_PX and 0 < height < SANE_PX, name
    html = page.read_text(encoding="utf-8")
    sizes = _svg_sizes(html)
    assert all(0 < w < SANE_PX and 0 < h < SANE_PX for w, h in sizes), sizes
    # Every question shows either its chart or why it has none.
    empty = html.count('<p class="empty">')
    assert len(sizes) + empty == len(RELEASED_QUESTIONS)
    if window == "one_week":
        assert '<section id="q-trends"><h2>' in html
        trends = html[html.index('<section id="q-trends">') :]
        assert "<svg" in trends[: trends.index("</section>")], "the week's trend is drawn"
