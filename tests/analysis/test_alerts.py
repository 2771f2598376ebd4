"""Alerts: pure rules that never fire on noise, computed from released cells only, the same from
a file and from a running collector (``lmcp analysis alerts``)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
from pathlib import Path
from statistics import NormalDist

import duckdb
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from pydantic import SecretStr
from typer.testing import CliRunner

from analysis._cells import CUBE_OF
from analysis._filters import Period
from analysis._questions import GROWTH, MIN_Z, Question
from analysis._rows import RegressionRow, TopRow, TrendRow
from analysis.alerts import (
    DOCUMENT_KIND,
    NEW_FRICTION_FALSE_ALARM,
    AlertKind,
    friction_alerts,
    new_friction_z,
    on_release,
    regression_alerts,
    released_alerts,
    spike_alerts,
)
from analysis.cli import app
from collector.db import migrate
from collector.releases.cubes import CUBES
from collector.releases.store import KEY_SEP
from collector.settings import CollectorSettings
from tests.hypothesis_profiles import at_most

D0 = dt.date(2026, 3, 2)  # a Monday: week w is D0 + 7w .. D0 + 7w + 6
WEEK = dt.timedelta(days=7)
SIGMA = 2.0  # every released cell's noise sd in the hand-built file: moe = ceil(1.96 * 2) = 4
NEWEST = Period(D0 + 3 * WEEK, D0 + 3 * WEEK + dt.timedelta(days=6))
TEAM_TOKEN = "team-token-for-alert-tests"

_SD = st.integers(0, 60)
_KEY = st.tuples(st.sampled_from(["read_note", "send_email"]), st.sampled_from(["timeout"]))


def _top(tool: str, n: int, moe: int, prev_n: int | None = None) -> TopRow:
    change = None if prev_n is None else n - prev_n
    prev_moe = None if prev_n is None else moe
    return TopRow(tool, "timeout", "cannot_complete", n, moe, prev_n, prev_moe, change, None, None,
                  None)  # fmt: skip


# -- the pure rules ------------------------------------------------------------------------------


@hsettings(max_examples=at_most(200))
@given(n=st.integers(0, 500), moe=_SD, prev=st.none() | st.integers(0, 500), pmoe=_SD)
def test_friction_rules_fire_exactly_clear_of_the_noise(
    n: int, moe: int, prev: int | None, pmoe: int
) -> None:
    now = [_top("read_note", n, moe, prev)]
    # ``before`` holds the previous week's rows above their noise; a smaller one is absent.
    above_before = prev is not None and prev > pmoe
    before = [_top("read_note", prev, pmoe)] if above_before and prev is not None else []
    kinds = [a.kind for a in friction_alerts(now, before)]
    sd, psd = moe / 1.96, pmoe / 1.96
    new = not above_before and n > 0 and n >= new_friction_z() * sd
    growing = (
        above_before
        and prev is not None
        and n - prev > 0
        and n - prev >= MIN_Z * math.sqrt(sd**2 + psd**2)
        and n >= GROWTH * prev
    )
    assert kinds == [AlertKind.new_friction] * new + [AlertKind.growing_friction] * growing
    # Never on noise: a count within its own margin is never new, a change within the margin
    # of the difference never growing.
    if n <= moe:
        assert AlertKind.new_friction not in kinds
    if prev is not None and n - prev <= math.sqrt(moe**2 + pmoe**2):
        assert AlertKind.growing_friction not in kinds


def test_a_week_of_empty_cells_calls_one_new_in_ten_thousand_weeks_at_most() -> None:
    """Every cell of the friction cube's domain is a candidate each week: the threshold holds
    the chance that any empty one is called new on its noise to NEW_FRICTION_FALSE_ALARM (at
    MIN_Z alone it was about 1 week in 18)."""
    cells = len(CUBES[CUBE_OF[Question.top]].cells())
    z = new_friction_z()
    week_false_alarm = 1.0 - NormalDist().cdf(z) ** cells
    assert week_false_alarm <= NEW_FRICTION_FALSE_ALARM
    assert 1.0 - NormalDist().cdf(MIN_Z) ** cells > 0.05, "why MIN_Z alone was not enough"
    assert z > MIN_Z
    doc = (Path(__file__).parents[2] / "docs" / "alerts.md").read_text(encoding="utf-8")
    assert f"{cells:,} cells" in doc and f"({z:.1f} sd)" in doc, "docs/alerts.md says so"
    # The rule at that threshold: an empty cell's noise just under it is not new, at it is.
    sd = 10.0
    moe = math.ceil(1.96 * sd)
    at = math.ceil(z * moe / 1.96)
    assert friction_alerts([_top("read_note", at - 1, moe)], []) == []
    assert [a.kind for a in friction_alerts([_top("read_note", at, moe)], [])] == [
        AlertKind.new_friction
    ]


def test_a_cut_previous_week_calls_nothing_new() -> None:
    assert friction_alerts([_top("read_note", 900, 4)], [], before_complete=False) == []
    assert [a.kind for a in friction_alerts([_top("read_note", 900, 4)], [])] == [
        AlertKind.new_friction
    ]


@hsettings(max_examples=at_most(100))
@given(st.lists(st.tuples(st.integers(-14, 20), st.booleans()), max_size=20))
def test_spikes_are_the_flagged_days_of_the_period(days: list[tuple[int, bool]]) -> None:
    rows = [TrendRow(NEWEST.start + dt.timedelta(days=d), "all", 50, 4, 10, 3, s) for d, s in days]
    got = spike_alerts(rows, NEWEST)
    want = [r for r in rows if r.spike and NEWEST.start <= r.day <= NEWEST.end]
    assert [a.to_json()["day"] for a in got] == [r.day.isoformat() for r in want]
    assert all(a.kind is AlertKind.spike for a in got)


def test_regressions_are_taken_as_they_are() -> None:
    rows = [
        RegressionRow("1.1.0", D0, "read_note", "timeout", 40, 4, 20.0, 2.0, 0, 3, 0.0, 0.5, "new"),
        RegressionRow(
            "1.1.0", D0, "send_email", "timeout", 90, 4, 45.0, 2.0, 30, 3, 15.0, 1.0, "growing"
        ),
    ]
    got = [a.to_json() for a in regression_alerts(rows)]
    assert [(g["status"], g["tool"], g["n"], g["moe"]) for g in got] == [
        ("new", "read_note", 40, 4),
        ("growing", "send_email", 90, 4),
    ]


# -- from released cells -------------------------------------------------------------------------


def _cell(
    con: duckdb.DuckDBPyConnection, cube: str, day: dt.date, key: tuple[str, ...], n: int
) -> None:
    con.execute(
        "INSERT INTO release_cells VALUES ($1, $2, $3, $4)", [cube, day, KEY_SEP.join(key), n]
    )


def _released_file(path: Path) -> Path:
    """Four released weeks: a new and a growing friction, a steady one, a spike on the newest
    week's Saturday, and version 1.1.0 of the newest week failing a new way."""
    con = duckdb.connect(str(path))
    migrate(con)
    for w in range(4):
        for cube in ("friction", "versions"):
            con.execute(
                "INSERT INTO release_periods VALUES ($1, $2, 'week', $3, 0, 0, 'test')",
                [cube, D0 + w * WEEK, SIGMA],
            )
        steady = ("read_file", "timeout", "cannot_complete")
        _cell(con, "friction", D0 + w * WEEK, steady, 100 + w)
        _cell(con, "versions", D0 + w * WEEK, ("1.0.0", "read_note", "not_found"), 200)
        _cell(con, "versions", D0 + w * WEEK, ("1.0.0", "read_file", "timeout"), 200)
    for d in range(28):
        day = D0 + dt.timedelta(days=d)
        con.execute(
            "INSERT INTO release_periods VALUES ('daily', $1, 'day', $2, 0, 0, 'test')",
            [day, SIGMA],
        )
        _cell(con, "daily", day, ("cannot_complete", "macos"), 300 if d == 26 else 20)
    prev, newest = D0 + 2 * WEEK, D0 + 3 * WEEK
    _cell(con, "friction", prev, ("read_note", "not_found", "cannot_complete"), 100)
    _cell(con, "friction", newest, ("read_note", "not_found", "cannot_complete"), 300)
    _cell(con, "friction", prev, ("send_email", "timeout", "cannot_complete"), 1)
    _cell(con, "friction", newest, ("send_email", "timeout", "cannot_complete"), 60)
    for key, n in ((("1.1.0", "read_note", "not_found"), 200), (("1.1.0", "read_file", "timeout"),
                   200), (("1.1.0", "send_email", "timeout"), 400)):  # fmt: skip
        _cell(con, "versions", newest, key, n)
    con.close()
    return path


def _expected(doc: dict[str, object]) -> None:
    assert doc["kind"] == DOCUMENT_KIND
    assert doc["period"] == {"start": NEWEST.start.isoformat(), "end": NEWEST.end.isoformat()}
    assert doc["released_through"] == NEWEST.end.isoformat()
    alerts = doc["alerts"]
    assert isinstance(alerts, list)
    found = {(a["kind"], a.get("tool"), a.get("series"), a.get("status")) for a in alerts}
    assert found == {
        ("new_friction", "send_email", None, None),
        ("growing_friction", "read_note", None, None),
        ("regression", "send_email", None, "new"),
        ("spike", None, "all", None),
        ("spike", None, "cannot_complete", None),
    }
    spikes = {a["day"] for a in alerts if a["kind"] == "spike"}
    assert spikes == {(D0 + dt.timedelta(days=26)).isoformat()}
    new = next(a for a in alerts if a["kind"] == "new_friction")
    assert (new["n"], new["moe"], new["prev_n"]) == (60, 4, 1)
    text = doc["text"]
    assert isinstance(text, str) and len(text.splitlines()) == 1 + len(alerts)
    assert "*New friction*: `send_email` timeout (cannot_complete): 60 \u00b1 4" in text


def test_the_alerts_of_a_released_file(tmp_path: Path) -> None:
    con = duckdb.connect(str(_released_file(tmp_path / "r.duckdb")), read_only=True)
    try:
        report = released_alerts(con)
        assert report is not None
        _expected(json.loads(json.dumps(report.to_json())))
        # The job's hook: only when the run released the newest week of the clock cube.
        assert on_release(con, [("friction", NEWEST.start)]) == report.to_json()
        assert on_release(con, [("friction", NEWEST.start - WEEK), ("daily", NEWEST.end)]) is None
        assert on_release(con, []) is None
        # Nothing read but releases: the file holds no signal at all.
        assert con.execute("SELECT count(*) FROM signals").fetchone() == (0,)
    finally:
        con.close()


def test_a_file_without_releases_has_no_alerts(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "e.duckdb"))
    migrate(con)
    assert released_alerts(con) is None and on_release(con, [("friction", D0)]) is None
    con.close()
    result = CliRunner().invoke(app, ["alerts", "--db", str(tmp_path / "e.duckdb")])
    assert result.exit_code != 0 and "no releases" in result.output


def test_the_cli_shows_the_same_list_from_a_file_and_from_a_collector(tmp_path: Path) -> None:
    from tests._servers import running_collector

    path = _released_file(tmp_path / "r.duckdb")
    local = CliRunner().invoke(app, ["alerts", "--db", str(path), "--json"])
    assert local.exit_code == 0, local.output
    _expected(json.loads(local.output))
    lines = CliRunner().invoke(app, ["alerts", "--db", str(path)])
    assert lines.output.strip() == json.loads(local.output)["text"]
    settings = CollectorSettings(
        db_path=path,
        read_tokens=[SecretStr(TEAM_TOKEN)],
        retention_days=36500,
        release_backfill_days=0,  # the job releases nothing: the file's releases stay as built
        rate_limit_enabled=False,
    )
    with running_collector(settings, today=lambda: NEWEST.end + dt.timedelta(days=3)) as url:
        remote = CliRunner().invoke(app, ["alerts", "--url", url, "--token", TEAM_TOKEN, "--json"])
        refused = CliRunner().invoke(app, ["alerts", "--url", url, "--token", "wrong-token"])
    assert remote.exit_code == 0, remote.output
    assert json.loads(remote.output) == json.loads(local.output)
    assert refused.exit_code == 1 and "wrong-token" not in refused.output


def test_fields_are_enums_names_dates_and_numbers() -> None:
    row = _top("read_note", 900, 4)
    (alert,) = friction_alerts([row], [])
    values = alert.to_json()
    assert set(values) == {"kind", "tool", "error_class", "friction_type", "n", "moe", "prev_n"}
    assert values == {"kind": "new_friction", **{
        k: v for k, v in dataclasses.asdict(row).items()
        if k in {"tool", "error_class", "friction_type", "n", "moe", "prev_n"}
    }}  # fmt: skip
