"""The daily contribution bound: its pure rule as a property, its file, and its place in
``report_friction`` (checked before anything is built, queued or sent)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable
from contextlib import ExitStack

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.contributions import ContributionBudget, Refusal
from client.paths import LmcpHome
from client.runtime import Runtime
from contract.limits import DAILY_SIGNAL_LIMIT
from tests._servers import child_process

from .conftest import Recorder

MakeRuntime = Callable[..., tuple[Runtime, Recorder]]

DAY = dt.date(2026, 11, 30)


@given(
    claims=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(["a/x/1", "a/x/2", "b/y/1", "c/z/3"])),
        max_size=40,
    ),
    limit=st.integers(0, DAILY_SIGNAL_LIMIT + 5),
)
def test_allowed_exactly_when_new_today_and_under_the_limit(
    tmp_path_factory: pytest.TempPathFactory, claims: list[tuple[int, str]], limit: int
) -> None:
    home = LmcpHome(tmp_path_factory.mktemp("home"))
    budget = ContributionBudget(home, limit=limit)
    bound = min(limit, DAILY_SIGNAL_LIMIT)
    used: dict[int, list[str]] = {}
    for offset, key in sorted(claims, key=lambda c: c[0]):  # days only move forward
        day = DAY + dt.timedelta(days=offset)
        today = used.setdefault(offset, [])
        want = (
            Refusal.daily_duplicate
            if key in today
            else Refusal.daily_limit
            if len(today) >= bound
            else None
        )
        assert budget.claim(key, day) is want
        if want is None:
            today.append(key)
        assert budget.used(day) == len(today)
    # The file holds only today's date and the enum keys: nothing else.
    if home.contributions.exists():
        doc = json.loads(home.contributions.read_text())
        assert set(doc) <= {"day", "keys", "full"}


def test_a_damaged_file_fails_closed_for_the_day(home: LmcpHome) -> None:
    budget = ContributionBudget(home)
    home.contributions.write_text("{not json")
    assert budget.claim("a/b/c", DAY) is Refusal.daily_limit
    assert budget.used(DAY) == DAILY_SIGNAL_LIMIT
    assert budget.claim("a/b/c", DAY + dt.timedelta(days=1)) is None  # a new day starts fresh


def test_the_setting_lowers_the_limit_and_never_raises_it(home: LmcpHome) -> None:
    home.settings.write_text(json.dumps({"anonymous_signals": "on", "daily_signal_limit": 2}))
    assert ContributionBudget(home).limit == 2
    home.settings.write_text(json.dumps({"anonymous_signals": "on", "daily_signal_limit": 10**6}))
    assert ContributionBudget(home).limit == DAILY_SIGNAL_LIMIT
    home.settings.write_text(json.dumps({"daily_signal_limit": "lots"}))
    assert ContributionBudget(home).limit == DAILY_SIGNAL_LIMIT


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
    assert sum(won) == DAILY_SIGNAL_LIMIT
    assert len(json.loads(home.contributions.read_text())["keys"]) == DAILY_SIGNAL_LIMIT


def test_report_friction_refuses_before_building_or_queueing(
    make_runtime: MakeRuntime,
) -> None:
    rt, rec = make_runtime(mode="on")
    rt.host.dispatch("read_note", {"note_name": "a"})
    first = rt.reporter.report({"friction_type": "other", "tool_attempted": "read_note"})
    assert first["sent"] is True
    rt.host.dispatch("read_note", {"note_name": "a"})  # the same failure again
    again = rt.reporter.report({"friction_type": "other", "tool_attempted": "read_note"})
    assert again == {"sent": False, "reason": "daily_duplicate"}
    assert len(rec.requests) == 1 and len(rt.outbox) == 0
    assert [e.status for e in rt.sent_log.entries()] == ["delivered"]
    # The refused report did not consume the failure either: it is still there to see.
    assert rt.host.failure_for("read_note") is not None


def test_bad_input_spends_nothing(make_runtime: MakeRuntime) -> None:
    rt, _ = make_runtime(mode="on")
    for _ in range(DAILY_SIGNAL_LIMIT + 1):
        rt.host.dispatch("report_friction", {"friction_type": "furious"})
    assert rt.reporter.budget.used(rt.reporter._today()) == 0  # noqa: SLF001
