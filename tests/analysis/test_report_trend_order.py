"""The HTML report's trend table lists the newest days first, and so does its Markdown twin."""

from __future__ import annotations

import re

import duckdb

from analysis._questions import Question
from analysis.report import answer_all, build_report
from tests._synth import SYNTH_END


def _trend_days(page: str) -> list[str]:
    section = page[page.index('<section id="q-trends">') :]
    section = section[: section.index("</section>")]
    return re.findall(r"<tr><td>(\d{4}-\d\d-\d\d)</td>", section)


def test_the_trend_table_lists_the_newest_days_first(synth_con: duckdb.DuckDBPyConnection) -> None:
    report = build_report(answer_all(synth_con, questions=[Question.trends]))
    days = _trend_days(report.html)
    assert len(days) > 1, "the trend table has rows"
    assert days[0] == SYNTH_END.isoformat(), "the newest day comes first"
    assert days == sorted(days, reverse=True)
    # The Markdown twin has the same order.
    md_days = re.findall(r"^\| (\d{4}-\d\d-\d\d) \|", report.markdown, re.MULTILINE)
    assert md_days[0] == SYNTH_END.isoformat()
    assert md_days == sorted(md_days, reverse=True)
