"""Attack: a signed-in team member reads the dashboard for exact counts, or sends it private
values to show back.

The world: a friction released at 200, then 1,117 more of it stored in its released week (a
late batch), so its exact count (1,317), its tool's and the week's are far from every release.
The reader (``privacy_tests.audit.dashboard``) reads the overview, the pages of the tools
holding data (any other tool's page is scoped to a tool with nothing stored), every friction
page they link and every download any of them links (CSV and JSON): a figure equal to an exact
count anywhere means a raw count leaked. Read as figures (``tests/_figures.py``), not as
digits: an id or a coordinate holding them by chance is no figure. The same reader asks for
friction pages and downloads with a private value of every kind in each path segment and
period parameter: each answer is a refusal, none shows the value back."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest
from pydantic import SecretStr

from collector.releases.store import release_closed_periods
from collector.settings import CollectorSettings
from contract.accountant import ReleasePlan
from privacy_tests._release_world import D0, one_signal, write_days
from privacy_tests.audit.canaries import MARKER_ALPHABET, Canary, CanaryKind, canary_of
from privacy_tests.audit.dashboard import DashboardRead, friction_path, read_dashboard
from privacy_tests.audit.scan import assert_no_leaks, find_leaks
from tests._figures import figures, kind_of
from tests._servers import HANG_S, running_collector

TEAM = "team-token-for-the-dashboard-attack"
CELL = ("read_note", "not_found", "cannot_complete")
OTHER = ("search_files", "timeout", "repeated_failure")
RELEASED, LATE, OTHERS = 200, 1117, 40
#: Next to no noise (the release is not what is attacked): the cells without data release as 0,
#: so the pages link the two frictions only, each a page and four downloads, not one per cell.
PLAN = ReleasePlan(rho=1e12)
#: The exact counts no page or download may show: the cell's (also its tool's), the week's, and
#: the late batch's own day.
EXACT = {"friction": RELEASED + LATE, "week": RELEASED + LATE + OTHERS, "late day": LATE}


def _hostile() -> list[Canary]:
    rng = random.Random(20260106)
    tags = ["cnry" + "".join(rng.choice(MARKER_ALPHABET) for _ in range(12)) for _ in CanaryKind]
    return [canary_of(kind, tag, filler="é x") for kind, tag in zip(CanaryKind, tags, strict=True)]


HOSTILE = _hostile()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("dashboard-attack") / "signals.duckdb"
    next_day = D0 + dt.timedelta(days=1)
    write_days(db, [(D0, [one_signal(D0, *CELL) for _ in range(RELEASED)]),
                    (next_day, [one_signal(next_day, *OTHER) for _ in range(OTHERS)])])  # fmt: skip
    with duckdb.connect(str(db)) as con:  # once D0's week is closed
        release_closed_periods(con, D0 + dt.timedelta(days=10), PLAN, retention_days=14)
    late = D0 + dt.timedelta(days=2)
    write_days(db, [(late, [one_signal(late, *CELL) for _ in range(LATE)])])
    with duckdb.connect(str(db), read_only=True) as con:
        (stored,) = con.execute("SELECT count(*) FROM signals").fetchone() or (0,)
    assert stored == EXACT["week"], "the raw rows are stored beside their release"
    return db


@pytest.fixture(scope="module")
def read(world: Path) -> Iterator[DashboardRead]:
    settings = CollectorSettings(
        db_path=world, read_tokens=[SecretStr(TEAM)], retention_days=36500,
        rate_limit_enabled=False,
    )  # fmt: skip
    with (
        running_collector(settings) as url,
        httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as http,
    ):
        assert http.post("/dashboard/login", data={"token": TEAM}).status_code in (200, 303)
        tools = {CELL[0], OTHER[0]}
        yield read_dashboard(http, [CELL], hostile=[c.text for c in HOSTILE], tools=tools)


def _shown(response: httpx.Response) -> set[float]:
    return figures(kind_of(response.headers["content-type"]), response.text)


def test_the_reader_reaches_friction_pages_and_both_kinds_of_download(read: DashboardRead) -> None:
    """The attack cannot pass by reading nothing: a page per friction, every download linked."""
    assert read.failed() == [], "every page and download linked answers"
    frictions = read.friction_pages()
    assert friction_path(*CELL) in frictions and friction_path(*OTHER) in {
        u.split("?")[0] for u in frictions
    }, "the given friction's page and one reached by its link"
    for kind in ("csv", "json"):
        found = read.downloads_of(kind)
        assert [u for u in found if u.startswith("/dashboard/friction/")], f"a friction's {kind}"
        assert [u for u in found if u.startswith("/dashboard/export/")], f"a panel's {kind}"
        assert [u for u in found if u.startswith("/dashboard/tool/")], f"a tool's {kind}"


def test_an_exact_count_that_differs_from_its_release_is_nowhere(read: DashboardRead) -> None:
    answers = {**read.pages, **read.downloads}
    shown = {url: _shown(r) for url, r in answers.items()}
    for what, n in EXACT.items():
        assert [u for u, found in shown.items() if n in found] == [], f"the {what}'s exact count"
    # The control: the friction's released count is far from its exact one, and is read as a
    # figure where its page shows it.
    total = next(
        r.json()["total"] for u, r in read.downloads.items()
        if u.startswith(friction_path(*CELL) + "/export/") and u.split("?")[0].endswith(".json")
    )  # fmt: skip
    assert abs(total["n"] - EXACT["friction"]) > 10 * max(total["moe"], 1)
    page = read.pages[friction_path(*CELL)].text
    assert total["n"] in shown[friction_path(*CELL)], "the released count is read as a figure"
    released_cell = f"{total['n']:,} \u00b1 {total['moe']:,}"
    assert released_cell in page
    # The same reading sees an exact count where the page would show it instead.
    leaked_page = page.replace(released_cell, f"{EXACT['friction']:,} \u00b1 0")
    assert EXACT["friction"] in figures("html", leaked_page)


def test_private_values_in_paths_and_periods_are_refused_and_never_shown_back(
    read: DashboardRead,
) -> None:
    assert len(read.hostile) >= 20 * len(HOSTILE), "every path segment and period, each value"
    assert read.not_refused() == []
    # The period asks rendered their page with its error above the form: where an echo would be.
    periods = {w: r for w, r in read.hostile.items() if "of the period" in w and "page" in w}
    assert periods and all('id="page-error"' in r.text for r in periods.values())
    sinks = read.sinks()
    assert_no_leaks({k: v for k, v in sinks.items() if "hostile" in k}, HOSTILE)
    # The control: every value went out in the asks, where the same scan finds each of them.
    sent = b"\n".join(str(r.request.url).encode() for r in read.hostile.values())
    assert {leak.kind for leak in find_leaks({"asks": sent}, HOSTILE)} == {
        c.kind.value for c in HOSTILE
    }
