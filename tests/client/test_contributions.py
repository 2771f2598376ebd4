"""The weekly contribution bound: its rule as a property (whatever the order of days), its
file and the records counted with it, the attacks an installation's own user could try, and
its place in ``report_friction`` (checked before anything is built, queued or sent)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable
from contextlib import ExitStack

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.contributions import ContributionBudget, Refusal, contribution_key, week_of
from client.outbox import Outbox
from client.paths import LmcpHome
from client.runtime import Runtime
from client.sentlog import SentLog
from contract.days import utc_today
from contract.limits import PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT
from contract.schema import ErrorClass, FrictionSignal, FrictionType, ToolName
from tests.factories import make_signal

from .conftest import Recorder

MakeRuntime = Callable[..., tuple[Runtime, Recorder]]

MONDAY = dt.date(2026, 11, 30)
SUNDAY = MONDAY - dt.timedelta(days=1)
ONE = dt.timedelta(days=1)
KEYS = [f"{t.value}/not_found/{f.value}" for t in list(ToolName)[:12] for f in FrictionType]


def _day(offset: int) -> dt.date:
    return MONDAY + dt.timedelta(days=offset)


# -- the rule -------------------------------------------------------------------------------
@given(
    claims=st.lists(st.tuples(st.integers(-10, 24), st.sampled_from(KEYS[:12])), max_size=60),
    limit=st.integers(0, WEEKLY_SIGNAL_LIMIT + 5),
    ordered=st.booleans(),
)
def test_never_more_than_the_bound_per_week_whatever_the_days(
    tmp_path_factory: pytest.TempPathFactory,
    claims: list[tuple[int, str]],
    limit: int,
    ordered: bool,
) -> None:
    """Allowed exactly when the day is not before the latest claimed, the key is new this week
    and the week is not spent: so never more than C a week, never 2 per key a week, whether
    the days move forward or jump back and forth."""
    home = LmcpHome(tmp_path_factory.mktemp("home"))
    budget = ContributionBudget(home, limit=limit)
    bound = min(limit, WEEKLY_SIGNAL_LIMIT)
    if ordered:
        claims = sorted(claims, key=lambda c: c[0])
    granted: dict[dt.date, list[str]] = {}
    latest: dt.date | None = None
    for offset, key in claims:
        day = _day(offset)
        week = granted.setdefault(week_of(day), [])
        want = (
            Refusal.clock_moved_back
            if latest is not None and day < latest
            else Refusal.weekly_duplicate
            if key in week
            else Refusal.weekly_limit
            if len(week) >= bound
            else None
        )
        assert budget.claim(key, day) is want
        if want is None:
            week.append(key)
            latest = day
        if latest is None or week_of(day) >= week_of(latest) - 7 * ONE:
            # The file keeps the latest week and the one before (older ones refuse anyway).
            assert budget.used(day) == len(week)
    for keys in granted.values():
        assert len(keys) <= bound <= WEEKLY_SIGNAL_LIMIT
        assert max((keys.count(k) for k in keys), default=0) <= PER_KEY_WEEKLY_LIMIT
    # The file holds only days and the enum keys: nothing else.
    if home.contributions.exists():
        doc = json.loads(home.contributions.read_text())
        assert set(doc) <= {"latest", "weeks", "full"}
        assert all(k in KEYS for keys in doc["weeks"].values() for k in keys)


def test_a_week_boundary_sundays_claims_do_not_spend_mondays_budget(home: LmcpHome) -> None:
    budget = ContributionBudget(home)
    assert week_of(SUNDAY) == MONDAY - 7 * ONE and week_of(MONDAY) == MONDAY
    sunday = [budget.claim(k, SUNDAY) for k in KEYS[: WEEKLY_SIGNAL_LIMIT + 2]]
    assert sunday.count(None) == WEEKLY_SIGNAL_LIMIT
    assert budget.used(SUNDAY) == WEEKLY_SIGNAL_LIMIT
    assert budget.used(MONDAY) == 0
    # The same keys, the next day, in the next week: a new budget, Sunday's untouched.
    monday = [budget.claim(k, MONDAY) for k in KEYS[: WEEKLY_SIGNAL_LIMIT + 2]]
    assert monday.count(None) == WEEKLY_SIGNAL_LIMIT
    assert monday[WEEKLY_SIGNAL_LIMIT:] == [Refusal.weekly_limit] * 2
    # And a day within the week shares Monday's budget.
    assert budget.claim(KEYS[-1], MONDAY + 6 * ONE) is Refusal.weekly_limit


def test_a_damaged_file_fails_closed_for_the_week(home: LmcpHome) -> None:
    budget = ContributionBudget(home)
    home.contributions.write_text("{not json")
    assert budget.used(MONDAY) == WEEKLY_SIGNAL_LIMIT
    assert budget.claim("a/b/c", MONDAY) is Refusal.weekly_limit
    assert budget.claim("a/b/d", MONDAY + 6 * ONE) is Refusal.weekly_limit  # the whole week
    assert budget.used(MONDAY) == WEEKLY_SIGNAL_LIMIT
    assert budget.claim("a/b/c", MONDAY + 7 * ONE) is None  # a new week starts fresh


def test_the_file_of_an_older_release_is_read_as_its_week(home: LmcpHome) -> None:
    home.contributions.write_text(json.dumps({"day": "2026-12-01", "keys": ["a/b/c", "a/b/d"]}))
    budget = ContributionBudget(home)
    assert budget.used(MONDAY) == 2
    assert budget.claim("a/b/c", MONDAY + 2 * ONE) is Refusal.weekly_duplicate
    assert budget.claim("a/b/e", MONDAY) is Refusal.clock_moved_back  # its day was Tuesday


def test_the_setting_lowers_the_limit_and_never_raises_it(home: LmcpHome) -> None:
    def limit(**settings: object) -> int:
        home.settings.write_text(json.dumps({"anonymous_signals": "on", **settings}))
        return ContributionBudget(home).limit

    assert limit() == WEEKLY_SIGNAL_LIMIT == 8
    assert limit(weekly_signal_limit=2) == 2
    assert limit(weekly_signal_limit=10**6) == WEEKLY_SIGNAL_LIMIT
    assert limit(weekly_signal_limit="lots") == WEEKLY_SIGNAL_LIMIT
    assert limit(weekly_signal_limit=True) == WEEKLY_SIGNAL_LIMIT
    # The older daily key is still a lower bound, never a raise.
    assert limit(daily_signal_limit=3) == 3
    assert limit(daily_signal_limit=10) == WEEKLY_SIGNAL_LIMIT
    assert limit(daily_signal_limit=3, weekly_signal_limit=5) == 3
    assert limit(daily_signal_limit=6, weekly_signal_limit=5) == 5
    home.settings.write_text("[1, 2]")
    assert ContributionBudget(home).limit == WEEKLY_SIGNAL_LIMIT


# -- attacks an installation's user could try ------------------------------------------------
def _signal(day: dt.date, n: int) -> FrictionSignal:
    """Signal ``n`` of a week: its own key, none of them among ``KEYS[-10:]``."""
    return make_signal(
        day=day,
        tool_attempted=list(ToolName)[n % 8],
        error_class=ErrorClass.not_found,
        friction_type=list(FrictionType)[n // 8],
    )


@pytest.mark.parametrize("where", ["outbox", "sent_log", "both"])
def test_deleting_the_counter_mid_week_grants_nothing_while_the_records_exist(
    home: LmcpHome, where: str
) -> None:
    """Spend the week, delete ``contributions.json``: the signals in the outbox and the sent
    log still hold the week (the old counter started empty: 8 more)."""
    wednesday = MONDAY + 2 * ONE
    budget = ContributionBudget(home)
    signals = [_signal(MONDAY + ONE, n) for n in range(WEEKLY_SIGNAL_LIMIT)]
    for n, signal in enumerate(signals):
        assert budget.claim(_key(signal), MONDAY + ONE) is None
        if where == "outbox" or (where == "both" and n % 2):
            Outbox(home).add([signal])
        else:
            SentLog(home).append("delivered", [signal])
    home.contributions.unlink()
    fresh = [budget.claim(k, wednesday) for k in KEYS[-10:]]
    assert fresh == [Refusal.weekly_limit] * 10
    assert budget.used(wednesday) == WEEKLY_SIGNAL_LIMIT
    # The same keys again: duplicates, known from the records alone.
    assert budget.claim(_key(signals[0]), wednesday) is Refusal.weekly_duplicate
    # A damaged counter is no better than a deleted one.
    home.contributions.write_text("garbage")
    assert budget.claim(KEYS[-1], wednesday) is Refusal.weekly_limit
    home.contributions.unlink()
    # The records' days are claimed days too: the clock cannot go back before them.
    assert budget.claim(KEYS[-1], MONDAY) is Refusal.clock_moved_back


def _key(signal: FrictionSignal) -> str:
    return contribution_key(signal.tool_attempted, signal.error_class, signal.friction_type)


def test_deleting_the_counter_through_report_friction_grants_nothing(
    make_runtime: MakeRuntime,
) -> None:
    """Deleting the counter, end to end: fill the week (some delivered, some queued), delete
    the counter, report again: every new report is refused and nothing is built."""
    rt, rec = make_runtime(*([httpx.Response(200)] * 4), *([httpx.Response(503)] * 100), mode="on")
    replies = [
        rt.reporter.report({"friction_type": f.value, "tool_attempted": t})
        for t in ("read_note", "list_notes")
        for f in FrictionType
    ][:WEEKLY_SIGNAL_LIMIT]
    assert all(r.get("sent") or r.get("queued") for r in replies)
    rt.home.contributions.unlink()
    again = [
        rt.reporter.report({"friction_type": f.value, "tool_attempted": t})
        for t in ("read_file", "list_files", "send_email")
        for f in FrictionType
    ]
    assert {r["reason"] for r in again} == {"weekly_limit"}
    # Nothing more was built: the 8 are all the outbox and the sent log ever held.
    ids = {s.signal_id for s in rt.outbox.pending()}
    ids |= {e.signal["signal_id"] for e in rt.sent_log.entries()}
    assert len(ids) == WEEKLY_SIGNAL_LIMIT and len(rec.requests) >= 4


@pytest.mark.parametrize("gap", [1, 7], ids=["two days", "two weeks"])
def test_the_clock_moved_back_and_forth_grants_nothing_after_the_first(
    home: LmcpHome, gap: int
) -> None:
    """Alternating the clock between two days grants no more claims than the bound: the
    earlier day is refused once the later one was claimed, and the later day's week keeps its
    bound: at most C in all for one week, C per week when the days are two weeks apart."""
    budget = ContributionBudget(home)
    early, late = MONDAY, MONDAY + gap * ONE
    results = [budget.claim(k, early if i % 2 == 0 else late) for i, k in enumerate(KEYS[:50])]
    assert results[0] is None  # the first claim, on the early day
    assert all(r is Refusal.clock_moved_back for r in results[2::2])  # every later early claim
    granted = results.count(None)
    assert granted == WEEKLY_SIGNAL_LIMIT + (gap == 7)  # the early day's week got one
    assert budget.used(late) == WEEKLY_SIGNAL_LIMIT


def test_the_clock_moved_back_is_refused_in_report_friction(make_runtime: MakeRuntime) -> None:
    rt, rec = make_runtime(mode="on")
    today = utc_today()  # the sender judges lateness on the real clock
    days = iter([today, today - ONE, today])
    rt.reporter._today = lambda: next(days)  # noqa: SLF001
    first = rt.reporter.report({"friction_type": "other", "tool_attempted": "read_note"})
    back = rt.reporter.report({"friction_type": "other", "tool_attempted": "list_notes"})
    forth = rt.reporter.report({"friction_type": "other", "tool_attempted": "list_notes"})
    assert first["sent"] is True and forth["sent"] is True
    assert back == {"sent": False, "reason": "clock_moved_back"}
    sent_days = [json.loads(r.content)["signals"][0]["day"] for r in rec.requests]
    assert sent_days == [today.isoformat()] * 2


# -- sharing and wiring -----------------------------------------------------------------------
_CLAIMER = """
import datetime as dt, sys
from pathlib import Path
from client.contributions import ContributionBudget
from client.paths import LmcpHome
budget = ContributionBudget(LmcpHome(Path(sys.argv[1])))
won = sum(budget.claim(f"t{i}/x/{sys.argv[2]}", dt.date(2026, 11, 30)) is None for i in range(20))
print(won)
"""


@pytest.mark.slow
def test_processes_sharing_a_home_share_one_budget(home: LmcpHome) -> None:
    """The MCP server and the CLI are separate processes: the bound holds across them."""
    from tests._servers import child_process  # the servers' module: only this test needs it

    with ExitStack() as stack:
        claimers = [
            stack.enter_context(
                child_process(
                    [sys.executable, "-c", _CLAIMER, str(home.root), str(n)],
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
            for n in range(4)
        ]
        won = [int(c.popen.communicate()[0]) for c in claimers]
    assert sum(won) == WEEKLY_SIGNAL_LIMIT
    weeks = json.loads(home.contributions.read_text())["weeks"]
    assert len(weeks["2026-11-30"]) == WEEKLY_SIGNAL_LIMIT


def test_report_friction_refuses_before_building_or_queueing(
    make_runtime: MakeRuntime,
) -> None:
    rt, rec = make_runtime(mode="on")
    rt.host.dispatch("read_note", {"note_name": "a"})
    first = rt.reporter.report({"friction_type": "other", "tool_attempted": "read_note"})
    assert first["sent"] is True
    rt.host.dispatch("read_note", {"note_name": "a"})  # the same failure again
    again = rt.reporter.report({"friction_type": "other", "tool_attempted": "read_note"})
    assert again == {"sent": False, "reason": "weekly_duplicate"}
    assert len(rec.requests) == 1 and len(rt.outbox) == 0
    assert [e.status for e in rt.sent_log.entries()] == ["delivered"]
    # The refused report did not consume the failure either: it is still there to see.
    assert rt.host.failure_for("read_note") is not None


def test_bad_input_spends_nothing(make_runtime: MakeRuntime) -> None:
    rt, _ = make_runtime(mode="on")
    for _ in range(WEEKLY_SIGNAL_LIMIT + 1):
        rt.host.dispatch("report_friction", {"friction_type": "furious"})
    assert rt.reporter.budget.used(rt.reporter._today()) == 0  # noqa: SLF001
