"""Attack: one installation adds more than its bound to a release: by repeating a failure, by
deleting its counter, by moving its clock, by a long offline backlog. The client bounds each
installation's contributions per UTC week before a signal is built: at most one per (tool,
error class, friction type) and at most C in all (the published
``contract.limits.WEEKLY_SIGNAL_LIMIT``), claimed for the week of the signal's own day, which is
the week the collector counts it in. Counted in a real collector's DuckDB file:

- the same failure reported 5 times stores 1 signal; 30 different failures store C = 8; no
  (tool, error class, friction type) cell of one installation's week ever holds more than 1;
- deleting ``contributions.json`` mid-week, or moving the clock back and forth between two
  days, grants nothing more (without the sent log's record and the day order, each would
  grant every claim);
- a 30-day offline backlog delivers only the days still counted (``LATE_DAYS``); the rest is
  dropped as expired, never piled into one received day (30 days of reports would be);
- a report built before midnight and delivered after keeps its day and its week.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pydantic import SecretStr

from client.contributions import ContributionBudget, contribution_key, week_of
from client.delivery import drain_outbox
from client.outbox import Outbox
from client.paths import LmcpHome
from client.runtime import Runtime
from client.sender import Sender
from client.sentlog import SentLog
from collector.settings import CollectorSettings
from contract.limits import LATE_DAYS, PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT
from contract.schema import ErrorClass, FrictionType, ToolName
from tests._delivery import accepted, deliver_queued
from tests._servers import refused_port, running_collector
from tests.factories import make_signal

TOOLS = ("read_note", "list_notes", "read_file", "list_files", "send_email", "get_datetime")
#: The collector's and the client's "today" where a test fixes the calendar (a Wednesday).
TODAY = dt.date(2026, 12, 2)
ONE = dt.timedelta(days=1)


def _home(tmp_path: Path, mode: str = "on") -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(f'{{"anonymous_signals": "{mode}"}}')
    return home


def _settings(tmp_path: Path) -> CollectorSettings:
    return CollectorSettings(
        db_path=tmp_path / "signals.duckdb",
        read_tokens=[SecretStr("attack-bound-token")],
        rate_limit_enabled=False,
    )


@contextmanager
def _collector(settings: CollectorSettings, today: dt.date | None = None) -> Iterator[str]:
    """A real collector on loopback; ``today``: its fixed UTC day (None: the real clock)."""
    kwargs: dict[str, Any] = {} if today is None else {"today": lambda: today}
    with running_collector(settings, **kwargs) as url:
        yield url


def _cells(db: Path) -> list[tuple[str, str, str, int]]:
    """Per (tool, error class, friction type, week of the signal's day): how many stored."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT tool_attempted::VARCHAR, error_class::VARCHAR, friction_type::VARCHAR, "
            "date_trunc('week', day), count(*) FROM signals GROUP BY ALL"
        ).fetchall()
    return [(str(t), str(e), str(f), int(n)) for t, e, f, _week, n in rows]


def _days(db: Path) -> list[dt.date]:
    with duckdb.connect(str(db), read_only=True) as con:
        return sorted(d for (d,) in con.execute("SELECT day FROM signals").fetchall())


def _report(rt: Runtime, **args: Any) -> dict[str, Any]:
    reply = rt.host.dispatch("report_friction", args).to_dict()
    result: dict[str, Any] = reply["result"]
    return result


def _fix_clock(rt: Runtime, days: Iterator[dt.date] | dt.date) -> None:
    """The client's clock: the day each report claims (and, fixed, the sender's too)."""
    if isinstance(days, dt.date):
        day = days
        rt.reporter._today = lambda: day  # noqa: SLF001
        rt.sender._today = lambda: day  # noqa: SLF001
    else:
        rt.reporter._today = lambda: next(days)  # noqa: SLF001


@pytest.mark.slow
def test_the_same_failure_five_times_stores_one(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    home = _home(tmp_path)
    with _collector(settings) as url:
        with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}) as rt:
            replies = []
            for _ in range(5):
                rt.host.dispatch("read_note", {"note_name": "the rare note"})
                replies.append(
                    _report(rt, friction_type="repeated_failure", tool_attempted="read_note")
                )
            # The refused reports were not queued either: at most the first waits there.
            assert len(rt.outbox) <= 1
            deliver_queued(rt)
    assert accepted(replies[0])
    assert replies[1:] == [{"sent": False, "reason": "weekly_duplicate"}] * 4
    assert _cells(settings.db_path) == [("read_note", "not_found", "repeated_failure", 1)]


@pytest.mark.slow
def test_thirty_different_failures_store_eight(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    home = _home(tmp_path)
    keys = list(itertools.product(TOOLS, FrictionType))
    assert len(keys) == 30
    with _collector(settings) as url:
        with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}) as rt:
            replies = [_report(rt, friction_type=f.value, tool_attempted=t) for t, f in keys]
            assert len(rt.outbox) <= WEEKLY_SIGNAL_LIMIT  # nothing refused was queued
            deliver_queued(rt)
    sent = [r for r in replies if accepted(r)]
    refused = [r for r in replies if r.get("reason") == "weekly_limit"]
    assert len(sent) == WEEKLY_SIGNAL_LIMIT == 8
    assert len(refused) == 30 - WEEKLY_SIGNAL_LIMIT
    cells = _cells(settings.db_path)
    assert sum(n for *_, n in cells) == WEEKLY_SIGNAL_LIMIT  # L1 = C
    assert len(cells) <= WEEKLY_SIGNAL_LIMIT  # L0 = C
    assert max(n for *_, n in cells) <= PER_KEY_WEEKLY_LIMIT  # Linf = 1


@pytest.mark.slow
def test_deleting_the_counter_mid_week_stores_nothing_more(tmp_path: Path) -> None:
    """Deleting ``contributions.json`` before every report grants nothing: the sent log still
    holds the week's signals, so every report after the deletion is refused, 8 stored in all."""
    settings = _settings(tmp_path)
    home = _home(tmp_path)
    keys = list(itertools.product(TOOLS, FrictionType))
    with _collector(settings, TODAY) as url:
        with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}) as rt:
            _fix_clock(rt, TODAY)
            first = [_report(rt, friction_type=f.value, tool_attempted=t) for t, f in keys[:8]]
            deliver_queued(rt)
            replies = []
            for t, f in keys[8:]:
                (home / "contributions.json").unlink(missing_ok=True)  # before every report
                replies.append(_report(rt, friction_type=f.value, tool_attempted=t))
            deliver_queued(rt)
    assert all(accepted(r) for r in first)
    assert {r["reason"] for r in replies} == {"weekly_limit"}
    assert sum(n for *_, n in _cells(settings.db_path)) == WEEKLY_SIGNAL_LIMIT


@pytest.mark.slow
def test_the_clock_moved_back_and_forth_stores_nothing_more(tmp_path: Path) -> None:
    """Alternating the clock between two days grants nothing more: the earlier day is refused
    once the later one was claimed, 8 stored, in the later day's week."""
    settings = _settings(tmp_path)
    home = _home(tmp_path)
    keys = list(itertools.product(ToolName, FrictionType))[:50]
    days = itertools.cycle([TODAY - ONE, TODAY])
    with _collector(settings, TODAY) as url:
        with Runtime.from_env({"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": url}) as rt:
            rt.sender._today = lambda: TODAY  # noqa: SLF001
            _fix_clock(rt, days)
            replies = [_report(rt, friction_type=f.value, tool_attempted=t) for t, f in keys]
            deliver_queued(rt)
    assert accepted(replies[0]) and accepted(replies[1])
    assert all(r["reason"] == "clock_moved_back" for r in replies[2::2])
    assert sum(map(accepted, replies)) == WEEKLY_SIGNAL_LIMIT
    stored = _days(settings.db_path)
    assert len(stored) == WEEKLY_SIGNAL_LIMIT
    assert Counter(week_of(d) for d in stored) == {week_of(TODAY): WEEKLY_SIGNAL_LIMIT}


@pytest.mark.slow
def test_a_thirty_day_backlog_delivers_only_the_days_still_counted(tmp_path: Path) -> None:
    """An installation offline for 30 days does not pile its backlog into one received day.
    Claimed day by day (8 a week at most), queued, then delivered through the real sender
    to a real collector: only the last ``LATE_DAYS`` + 1 days are sent and stored, each in its
    own week; the 27 older ones are dropped from the outbox and logged expired."""
    settings = _settings(tmp_path)
    home = LmcpHome(_home(tmp_path))
    budget = ContributionBudget(home)
    tools = list(ToolName)
    backlog = []
    for n in range(29, -1, -1):  # oldest first, one report a day
        day = TODAY - n * ONE
        signal = make_signal(day=day, tool_attempted=tools[n % len(tools)],
                             error_class=ErrorClass.not_found)  # fmt: skip
        key = contribution_key(signal.tool_attempted, signal.error_class, signal.friction_type)
        assert budget.claim(key, day) is None
        backlog.append(signal)
    outbox, log = Outbox(home), SentLog(home)
    outbox.add(backlog)
    with _collector(settings, TODAY) as url:
        sender = Sender(url, today=lambda: TODAY)
        try:
            done = drain_outbox(outbox, sender, log)
        finally:
            sender.close()
    assert (done.delivered, done.expired, done.rejected, done.failed) == (3, 27, 0, False)
    assert len(outbox) == 0
    assert _days(settings.db_path) == [TODAY - n * ONE for n in range(LATE_DAYS, -1, -1)]
    statuses = Counter(e.status for e in log.entries())
    assert statuses == {"expired": 30 - (LATE_DAYS + 1), "delivered": LATE_DAYS + 1}


@pytest.mark.slow
def test_a_report_built_before_midnight_keeps_its_day_and_week(tmp_path: Path) -> None:
    """Built on Sunday with the collector unreachable, delivered on Monday: it is stored with
    Sunday's day (counted in Sunday's week), and Monday's budget is whole."""
    sunday = dt.date(2026, 12, 6)
    monday = sunday + ONE
    settings = _settings(tmp_path)
    home = _home(tmp_path)
    with refused_port() as port:
        env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": f"http://127.0.0.1:{port}"}
        with Runtime.from_env(env) as rt:
            _fix_clock(rt, sunday)
            reply = _report(rt, friction_type="other", tool_attempted="read_note")
            assert reply.get("queued") is True
    with _collector(settings, monday) as url:
        sender = Sender(url, today=lambda: monday)
        try:
            done = drain_outbox(Outbox(LmcpHome(home)), sender, SentLog(LmcpHome(home)))
        finally:
            sender.close()
    assert done.delivered == 1
    assert _days(settings.db_path) == [sunday]
    assert week_of(sunday) != week_of(monday)
    budget = ContributionBudget(LmcpHome(home))
    assert budget.used(sunday) == 1 and budget.used(monday) == 0


def test_the_bound_holds_in_local_mode_too(tmp_path: Path) -> None:
    """Local mode previews exactly what would be sent: the bound applies there as well."""
    home = _home(tmp_path, "local")
    env = {"LMCP_HOME": str(home), "LMCP_COLLECTOR_URL": "http://127.0.0.1:9"}
    with Runtime.from_env(env) as rt:
        replies = [
            _report(rt, friction_type=f.value, tool_attempted=t)
            for t, f in itertools.product(TOOLS, FrictionType)
        ]
        kept = rt.sent_log.entries()
    assert [r["reason"] for r in replies].count("local_only") == WEEKLY_SIGNAL_LIMIT
    assert len(kept) == WEEKLY_SIGNAL_LIMIT


def test_off_touches_no_counter(tmp_path: Path) -> None:
    home = _home(tmp_path, "off")
    with Runtime.from_env({"LMCP_HOME": str(home)}) as rt:
        assert _report(rt, friction_type="other") == {
            "sent": False,
            "reason": "anonymous_signals_off",
        }
    assert not (home / "contributions.json").exists()
