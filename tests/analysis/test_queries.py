"""Every triage question on a small hand-built dataset, with the answers worked out by hand."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import replace

import duckdb
import pytest

import analysis
from analysis import Filters, Period, Question, Version
from analysis._filters import FilterError
from analysis._period import NotCovered
from contract.schema import FrictionSignal, Platform, ToolName
from tests.analysis.conftest import day, many

MakeDb = Callable[[Sequence[FrictionSignal]], duckdb.DuckDBPyConnection]
WEEK2 = Filters(start=day(8), end=day(14))


def test_top_friction_compares_with_the_previous_period(make_db: MakeDb) -> None:
    con = make_db(
        # read_note/not_found: 8 now, 6 in the previous week -> +2, +33.3 %
        many(8, when=day(9), tool="read_note", error_class="not_found")
        + many(6, when=day(2), tool="read_note", error_class="not_found")
        # send_email/timeout: 5 now, 3 before -> shown, but the previous 3 are suppressed
        + many(5, when=day(14), tool="send_email", error_class="timeout", friction="other")
        + many(3, when=day(7), tool="send_email", error_class="timeout", friction="other")
        # read_file/not_found: 4 now -> suppressed
        + many(4, when=day(8), tool="read_file")
        # list_notes: only before the period -> absent
        + many(10, when=day(1), tool="list_notes")
        # outside both periods
        + many(9, when=day(15), tool="read_note")
    )
    answer = analysis.top(con, WEEK2)
    assert answer.period == Period(day(8), day(14))
    assert [
        (r.tool, r.error_class, r.friction_type, r.n, r.prev_n, r.change, r.change_pct)
        for r in answer.rows
    ] == [
        ("read_note", "not_found", "cannot_complete", 8, 6, 2, 33.3),
        ("send_email", "timeout", "other", 5, None, None, None),
    ]


def test_top_friction_filters(make_db: MakeDb) -> None:
    con = make_db(
        many(6, when=day(9), platform="windows", version="1.2.0", tool="read_note")
        + many(7, when=day(9), platform="macos", version="1.2.1", tool="read_note")
        + many(5, when=day(10), platform="windows", version="1.3.0", tool="send_email")
    )

    def by(f: Filters) -> list[tuple[str, int]]:
        return [(r.tool, r.n) for r in analysis.top(con, f).rows]

    assert by(WEEK2) == [("read_note", 13), ("send_email", 5)]
    assert by(replace(WEEK2, tool=ToolName.send_email)) == [("send_email", 5)]
    # The friction cube has no platform or version: the answer names the filter it cannot take.
    for refused, name in ((replace(WEEK2, platform=Platform.windows), "platform"),
                          (replace(WEEK2, version=Version(1, 2)), "version")):  # fmt: skip
        with pytest.raises(FilterError) as exc:
            analysis.top(con, refused)
        assert exc.value.field == name


def test_default_period_is_the_last_4_weeks_to_the_last_signal(make_db: MakeDb) -> None:
    con = make_db(many(5, when=day(40)) + many(5, when=day(12)) + many(5, when=day(13)))
    answer = analysis.top(con)
    # Four whole weeks ending with the week of the last signal (day 40 is a Friday of week 6).
    assert answer.period == Period(day(15), day(42))
    assert [r.n for r in answer.rows] == [5]  # day 40; days 12 and 13 are weeks before


def test_trends_flag_spikes_against_the_week_before(make_db: MakeDb) -> None:
    signals: list[FrictionSignal] = []
    counts = {1: 5, 2: 5, 3: 11, 4: 5, 5: 5, 6: 5, 7: 5, 8: 12, 9: 5}
    for d, n in counts.items():
        signals += many(n, when=day(d), friction="cannot_complete")
        # 3 a day of another type: its own series is hidden (k = 5), 'all' counts them.
        signals += many(3, when=day(d), friction="repeated_failure")
    con = make_db(signals)
    rows = analysis.trends(con, Filters(start=day(8), end=day(9))).rows
    assert {r.series for r in rows} == {"all", "cannot_complete"}
    series = [(r.day, r.n, r.baseline, r.spike) for r in rows if r.series == "cannot_complete"]
    assert series == [
        (day(8), 12, 6, True),  # mean of days 1-7 = 41/7 = 5.86 (shown whole); 12 >= 2 x 5.86
        (day(9), 5, 7, False),  # mean of days 2-8 = 48/7
    ]
    totals = [(r.day, r.n, r.baseline, r.spike) for r in rows if r.series == "all"]
    # 15 against a baseline of 62/7 = 8.86: not twice it.
    assert totals == [(day(8), 15, 9, False), (day(9), 8, 10, False)]


def test_trends_baseline_reaches_before_the_period(make_db: MakeDb) -> None:
    con = make_db([s for d in range(1, 8) for s in many(5, when=day(d))] + many(10, when=day(8)))
    rows = analysis.trends(con, Filters(start=day(8), end=day(8))).rows
    assert [(r.series, r.n, r.baseline, r.spike) for r in rows] == [
        ("all", 10, 5.0, True),
        ("cannot_complete", 10, 5.0, True),
    ]


def _regression_data() -> list[FrictionSignal]:
    # Released versions (contract/catalogue/versions.json), four of each: a growth must
    # clear 4 standard errors of both shares (MIN_Z = 4).
    def v(n: int, version: str, tool: str, cls: str, d: int) -> list[FrictionSignal]:
        return many(4 * n, when=day(d), version=version, tool=tool, error_class=cls)

    return (
        v(10, "1.2.0", "read_note", "not_found", 1)
        + v(10, "1.2.0", "send_email", "timeout", 2)
        + v(3, "1.2.0", "list_notes", "timeout", 2)
        + v(10, "1.3.0", "read_note", "not_found", 5)
        + v(10, "1.3.0", "send_email", "timeout", 4)
        + v(5, "1.3.0", "read_file", "too_large", 6)
        + v(3, "1.3.0", "list_notes", "timeout", 6)
        + v(5, "1.4.0", "read_note", "not_found", 9)
        + v(20, "1.4.0", "send_email", "timeout", 8)
        + v(3, "1.4.0", "list_notes", "timeout", 9)
    )


def test_regressions_by_version(make_db: MakeDb) -> None:
    con = make_db(_regression_data())
    rows = analysis.regressions(con, Filters(start=day(1), end=day(10))).rows
    assert [
        (r.version, r.first_day, r.tool, r.error_class, r.n, r.share_pct, r.base_n,
         r.base_share_pct, r.status)
        for r in rows
    ] == [
        # 1.4.0: 80 of its 112; earlier versions: 80 of 204 (1.2.0's 92, 1.3.0's 112).
        ("1.4.0", day(8), "send_email", "timeout", 80, 71.4, 80, 39.2, "growing"),
        # 1.3.0: 20 of its 112; read_file/too_large never seen before. First seen: the first
        # day of the week it was released in (the versions cube is weekly).
        ("1.3.0", day(1), "read_file", "too_large", 20, 17.9, 0, 0.0, "new"),
    ]  # fmt: skip
    # list_notes/timeout (12 per version) holds its share: no regression.
    only = analysis.regressions(con, Filters(start=day(1), end=day(10), version=Version(1, 3)))
    assert [(r.version, r.tool) for r in only.rows] == [("1.3.0", "read_file")]


def test_platform_split(make_db: MakeDb) -> None:
    con = make_db(
        many(6, platform="macos", tool="read_note")
        + many(4, platform="macos", tool="send_email")
        + many(5, platform="windows", tool="read_note")
        + many(5, platform="windows", tool="read_file")
        + many(2, platform="linux", tool="read_note")
    )
    rows = analysis.platforms(con, Filters(start=day(1), end=day(1))).rows
    assert sorted((r.platform, r.tool, r.n, r.platform_n, r.share_pct) for r in rows) == [
        # send_email's 4 are not shown (k = 5) but count in macOS's total: shares are of all.
        ("macos", "read_note", 6, 10, 60.0),
        ("windows", "read_file", 5, 10, 50.0),
        ("windows", "read_note", 5, 10, 50.0),
    ]


def test_app_state_against_genuine_failures(make_db: MakeDb) -> None:
    con = make_db(
        many(6, tool="read_note", app=(True, True, True))
        + many(5, tool="read_note", error_class="permission_denied", app=(True, True, False))
        + many(2, tool="read_note", error_class="app_not_running", app=(True, False, None))
        + many(5, tool="create_note", error_class="app_not_installed", app=(False, False, None))
        + many(7, tool="recipe_run", error_class="step_failed")
    )
    rows = analysis.apps(con, Filters(start=day(1), end=day(1))).rows
    assert [(r.tool, r.app_state, r.n, r.tool_n, r.share_pct) for r in rows] == [
        ("read_note", "genuine", 6, 13, 46.2),  # of all 13 (the 2 not running hidden, counted)
        ("read_note", "not_permitted", 5, 13, 38.5),
        ("recipe_run", "genuine", 7, 7, 100.0),
        ("create_note", "not_installed", 5, 5, 100.0),
    ]


def test_argument_shapes(make_db: MakeDb) -> None:
    con = make_db(
        many(6, tool="read_file", args=[("path", "string", "17-256")])
        + many(5, tool="read_file", args=[("max_bytes", "integer", None), ("path", "string", "0")])
        + many(2, tool="read_file", args=[("path", "integer", None)])
        + many(4, tool="send_email", args=[("to", "array", "1-16")])
    )
    rows = analysis.shapes(con, Filters(start=day(1), end=day(1))).rows
    assert [(r.tool, r.arg, r.arg_type, r.size, r.n, r.share_pct) for r in rows] == [
        ("read_file", "path", "string", "17-256", 6, 46.2),  # of path's 13 (2 integers hidden)
        ("read_file", "max_bytes", "integer", "-", 5, 100.0),
        ("read_file", "path", "string", "0", 5, 38.5),
    ]


def test_ring_patterns(make_db: MakeDb) -> None:
    con = make_db(
        many(6, ring=[("list_notes", "ok"), ("read_note", "failed"), ("read_note", "failed")])
        + many(3, ring=[("search_files", "ok"), ("read_note", "failed"), ("read_note", "failed")])
        + many(5, ring=[("read_note", "failed")])
        + many(5, tool="read_file", ring=[("list_files", "ok"), ("read_file", "failed")])
    )
    rows = analysis.ring(con, Filters(start=day(1), end=day(1))).rows
    assert [
        (r.calls, r.prev2_tool, r.prev2_outcome, r.prev1_tool, r.prev1_outcome, r.tool,
         r.error_class, r.n)
        for r in rows
    ] == [
        (2, None, None, "read_note", "failed", "read_note", "not_found", 9),
        (2, None, None, "list_files", "ok", "read_file", "not_found", 5),
        (3, "list_notes", "ok", "read_note", "failed", "read_note", "not_found", 6),
    ]  # fmt: skip


def test_intent_distribution(make_db: MakeDb) -> None:
    con = make_db(
        many(6, intent="manage_note")
        + many(5, intent="read_file")
        + many(7)
        + many(2, intent="send_email")
    )
    rows = analysis.intents(con, Filters(start=day(1), end=day(1))).rows
    assert [(r.intent, r.n, r.share_pct) for r in rows] == [
        ("unspecified", 7, 35.0),  # of all 20 (send_email's 2 hidden, counted)
        ("manage_note", 6, 30.0),
        ("read_file", 5, 25.0),
    ]


def test_attempt_count_distribution(make_db: MakeDb) -> None:
    con = make_db(
        many(5)
        + many(6, attempts=1)
        + many(3, attempts=2)
        + many(3, attempts=4)
        + many(2, attempts=5)
        + many(5, attempts=12)
    )
    rows = analysis.attempts(con, Filters(start=day(1), end=day(1))).rows
    assert [(r.attempts, r.n, r.share_pct) for r in rows] == [
        ("1", 6, 25.0),  # of all 24 (the 3 of bucket 2 hidden, counted)
        ("3-5", 5, 20.8),
        ("more", 5, 20.8),
        ("unspecified", 5, 20.8),
    ]


@pytest.mark.parametrize("question", list(Question))
def test_every_question_on_an_empty_table_says_nothing_covers_it(
    make_db: MakeDb, question: Question
) -> None:
    with pytest.raises(NotCovered, match="no closed week of this file holds a signal"):
        analysis.ask(make_db([]), question)


@pytest.mark.parametrize("question", list(Question))
def test_answers_round_trip_through_json(
    synth_con: duckdb.DuckDBPyConnection, question: Question
) -> None:
    answer = analysis.ask(synth_con, question, Filters(start=dt.date(2026, 4, 1)))
    assert answer.rows, "the synthetic dataset answers every question"
    assert analysis.answer_from_json(answer.to_json()) == answer


def test_a_larger_k_hides_more(make_db: MakeDb) -> None:
    con = make_db(_regression_data())
    f = Filters(start=day(1), end=day(10))
    assert [r.n for r in analysis.top(con, f, k=20).rows] == [160, 100, 36, 20]
    assert [r.n for r in analysis.top(con, f, k=40).rows] == [160, 100]
    with pytest.raises(ValueError, match="k must be"):
        analysis.top(con, f, k=0)


def test_the_period_can_be_given_directly(make_db: MakeDb) -> None:
    con = make_db(many(5, when=day(3)))
    answer = analysis.top(con, period=Period(day(3), day(3)))
    assert [r.n for r in answer.rows] == [5]
    # A weekly cube answers whole weeks, and says so.
    assert answer.period == Period(day(1), day(7))
    assert answer.note is not None and "whole weeks" in answer.note
    assert dt.date(2026, 3, 4) == day(3)
