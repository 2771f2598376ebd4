"""Alerts on what the releases show: new or growing friction, regressions, spikes.

An alert is post-processing of released (differentially private) figures only, the same
answers the dashboard shows (``analysis._released``), so it is exactly as private as they are;
no ``signals`` row is read. The period alerted is the newest released week of the clock cube
(``analysis._cells.CLOCK``), ending at ``released_through``. The rules (``docs/alerts.md``),
each at ``MIN_Z`` noise standard deviations so that hundreds of released cells a week do not
alert on their noise (at 1.96 sds, 1 empty cell in 40 would):

- ``new_friction``: a ``top`` row of the week whose previous week was not above its own
  noise (absent from the previous week's ``top``), now ``n >= new_friction_z() * sd``: every
  one of the friction cube's 1,800 cells is a candidate each week, so its threshold is set for
  the whole domain (at ``MIN_Z`` alone, 1 week in 18 would call an empty cell new);
- ``growing_friction``: a ``top`` row whose previous week was above its noise, with
  ``n - prev_n >= MIN_Z * sqrt(sd**2 + prev_sd**2)`` and ``n >= GROWTH * prev_n``;
- ``regression``: every row of ``regressions`` over the dashboard's 4 weeks ending at the week
  (already tested against the noise variance, ``analysis._released._status``);
- ``spike``: every ``trends`` row of the week with ``spike`` true.

``sd`` is ``moe / Z95`` (``moe`` is rounded up, so the rules err on the quiet side). A document
holds enums, catalogue names, dates and released numbers only: never free text from data.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Annotated, Any

import typer

from analysis._cells import CUBE_OF
from analysis._cli_remote import TokenOpt, UrlOpt, remote_failed
from analysis._filters import Filters, Period
from analysis._questions import GROWTH, MIN_Z, Answer, Question
from analysis._rows import RegressionRow, Row, TopRow, TrendRow
from collector.releases.cubes import CUBES

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "DOCUMENT_KIND",
    "NEW_FRICTION_FALSE_ALARM",
    "Alert",
    "AlertKind",
    "AlertReport",
    "Ask",
    "alerts_command",
    "compute_alerts",
    "friction_alerts",
    "new_friction_z",
    "on_release",
    "register",
    "regression_alerts",
    "released_alerts",
    "spike_alerts",
]

#: The ``kind`` of every alert document (receivers may route on it).
DOCUMENT_KIND = "lmcp.alerts"
#: The two-sided 95 % quantile ``moe`` is a multiple of (``analysis._cells.Z95``).
_Z95 = 1.96
#: The most rows a question is asked for: the collector's ``MAX_LIMIT``, so a remote answer
#: and a file's are the same list.
_LIMIT = 1000
#: Days of the regressions' period: the dashboard's default (``analysis._filters``).
_REGRESSION_DAYS = 28

#: The chance, per released week, that an empty cell of the ``top`` question's cube is called
#: a new friction on its noise alone: one false alert in 10,000 weeks.
NEW_FRICTION_FALSE_ALARM = 1e-4

#: One question asked over one period, from a file or a collector (the released view).
Ask = Callable[[Question, Period], Answer[Row]]


class AlertKind(StrEnum):
    new_friction = "new_friction"
    growing_friction = "growing_friction"
    regression = "regression"
    spike = "spike"


_Value = str | int | float | None


@dataclass(frozen=True, slots=True)
class Alert:
    """One alert: its kind and its fields, in order (enums, catalogue names, dates, numbers)."""

    kind: AlertKind
    fields: tuple[tuple[str, _Value], ...]

    def to_json(self) -> dict[str, _Value]:
        return {"kind": self.kind.value, **dict(self.fields)}

    def line(self) -> str:
        """The alert as one line of Slack mrkdwn."""
        f = dict(self.fields)
        if self.kind is AlertKind.spike:
            return (
                f"*Spike* on {f['day']} in `{f['series']}`: {f['n']} \u00b1 {f['moe']} "
                f"(baseline {f['baseline']})"
            )
        what = f"`{f['tool']}` {f['error_class']}"
        if self.kind is AlertKind.regression:
            return (
                f"*Regression ({f['status']})* in {f['version']}: {what}, {f['share_pct']} % of "
                f"its signals (before: {f['base_share_pct']} %), {f['n']} \u00b1 {f['moe']}"
            )
        kind = "New friction" if self.kind is AlertKind.new_friction else "Growing friction"
        before = "" if f["prev_n"] is None else f" (previous week: {f['prev_n']})"
        return f"*{kind}*: {what} ({f['friction_type']}): {f['n']} \u00b1 {f['moe']}{before}"


@dataclass(frozen=True, slots=True)
class AlertReport:
    """The alerts of one released week."""

    period: Period
    released_through: dt.date
    alerts: tuple[Alert, ...]

    @property
    def text(self) -> str:
        """Slack mrkdwn: a heading line, then one line per alert."""
        head = (
            f"*LMCP friction alerts* for {self.period.start.isoformat()} to "
            f"{self.period.end.isoformat()} (released figures, 95 % margins)"
        )
        if not self.alerts:
            return f"{head}\nNo alert: nothing new, growing, regressing or spiking."
        return "\n".join([head, *(f"\u2022 {a.line()}" for a in self.alerts)])

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": DOCUMENT_KIND,
            "period": {"start": self.period.start.isoformat(), "end": self.period.end.isoformat()},
            "released_through": self.released_through.isoformat(),
            "alerts": [a.to_json() for a in self.alerts],
            "text": self.text,
        }


# -- the rules: pure functions of released rows ------------------------------------------------


def _sd(moe: int) -> float:
    return moe / _Z95


@functools.cache
def new_friction_z() -> float:
    """The noise sds a new friction must stand above 0: the one-sided quantile that bounds the
    week's chance of any false alert among the domain's cells (a union bound) by
    ``NEW_FRICTION_FALSE_ALARM``, and never under ``MIN_Z``."""
    cells = len(CUBES[CUBE_OF[Question.top]].cells())
    return max(MIN_Z, NormalDist().inv_cdf(1.0 - NEW_FRICTION_FALSE_ALARM / cells))


def _pick(row: Row, names: Sequence[str]) -> tuple[tuple[str, _Value], ...]:
    """Named fields of a released row, dates as ISO strings."""
    out: list[tuple[str, _Value]] = []
    for name in names:
        value = getattr(row, name)
        out.append((name, value.isoformat() if isinstance(value, dt.date) else value))
    return tuple(out)


_FRICTION = ("tool", "error_class", "friction_type", "n", "moe")
_REGRESSION = ("status", "version", "first_day", "tool", "error_class", "n", "moe", "share_pct",
               "base_share_pct")  # fmt: skip
_SPIKE = ("day", "series", "n", "moe", "baseline")


def friction_alerts(
    now: Sequence[TopRow], before: Sequence[TopRow], *, before_complete: bool = True
) -> list[Alert]:
    """New and growing friction: ``now`` is the week's ``top``, ``before`` the previous week's
    (its rows are exactly the keys above their noise then). When ``before`` may be cut short
    (``before_complete`` false: as many rows as asked), a key absent from it is not known to
    have been within noise, so it is never called new."""
    prev = {(r.tool, r.error_class, r.friction_type): r for r in before}
    out: list[Alert] = []
    for r in now:
        p = prev.get((r.tool, r.error_class, r.friction_type))
        key = _pick(r, _FRICTION)
        if p is None:
            if before_complete and r.n >= new_friction_z() * _sd(r.moe) and r.n > 0:
                out.append(Alert(AlertKind.new_friction, (*key, ("prev_n", r.prev_n))))
            continue
        change = r.n - p.n
        noise = math.sqrt(_sd(r.moe) ** 2 + _sd(p.moe) ** 2)
        if change > 0 and change >= MIN_Z * noise and r.n >= GROWTH * p.n:
            pct = round(100.0 * change / p.n, 1) if p.n > 0 else None
            fields = (*key, ("prev_n", p.n), ("prev_moe", p.moe), ("change", change),
                      ("change_pct", pct))  # fmt: skip
            out.append(Alert(AlertKind.growing_friction, fields))
    return out


def regression_alerts(rows: Sequence[RegressionRow]) -> list[Alert]:
    """Every regression row, as is (the answer already tested it against the noise)."""
    return [Alert(AlertKind.regression, _pick(r, _REGRESSION)) for r in rows]


def spike_alerts(rows: Sequence[TrendRow], period: Period) -> list[Alert]:
    """Every spike of ``trends`` on a day of ``period``."""
    return [
        Alert(AlertKind.spike, _pick(r, _SPIKE))
        for r in rows
        if r.spike and period.start <= r.day <= period.end
    ]


def _rows(answer: Answer[Row], kind: type[Any]) -> list[Any]:
    return [r for r in answer.rows if isinstance(r, kind)]


def compute_alerts(ask: Ask, released_through: dt.date) -> AlertReport:
    """The alerts of the week ending at ``released_through`` (the newest released day)."""
    week = Period(released_through - dt.timedelta(days=6), released_through)
    now = ask(Question.top, week)
    # The week before, when it is released (its answer's comparison); before the first release
    # there is none to ask, and every friction of the week is new against it (docs/alerts.md).
    before: Sequence[TopRow] = []
    if now.coverage is None or now.coverage.previous is not None:
        before = _rows(ask(Question.top, week.previous()), TopRow)
    friction = friction_alerts(_rows(now, TopRow), before, before_complete=len(before) < _LIMIT)
    regress = ask(Question.regressions, Period(
        released_through - dt.timedelta(days=_REGRESSION_DAYS - 1), released_through
    ))  # fmt: skip
    trends = ask(Question.trends, week)
    alerts = [
        *friction,
        *regression_alerts(_rows(regress, RegressionRow)),
        *spike_alerts(_rows(trends, TrendRow), week),
    ]
    return AlertReport(week, released_through, tuple(alerts))


def released_alerts(con: duckdb.DuckDBPyConnection) -> AlertReport | None:
    """The alerts of the newest released week of a connection's releases; None before any."""
    from analysis._released import ask_released, last_released_day

    end = last_released_day(con)
    if end is None:
        return None
    return compute_alerts(lambda q, p: ask_released(con, q, Filters(), limit=_LIMIT, period=p), end)


def on_release(
    con: duckdb.DuckDBPyConnection, released: Sequence[tuple[str, dt.date]]
) -> Mapping[str, Any] | None:
    """The retention job's hook, on the database thread after a run released ``released``:
    the document to send, or None. Only when the run released the newest week of the clock
    cube, and only when an alert fires: each closed week is alerted at most once."""
    from analysis._cells import CLOCK
    from collector.releases.store import last_released

    newest = last_released(con, CLOCK)
    if newest is None or (CLOCK, newest) not in set(released):
        return None
    report = released_alerts(con)
    if report is None or not report.alerts:
        return None
    return report.to_json()


# -- lmcp analysis alerts ------------------------------------------------------------------------


def register(app: typer.Typer) -> None:
    app.command("alerts")(alerts_command)


def alerts_command(
    db: Annotated[
        Path | None,
        typer.Option("--db", help="A DuckDB file holding released cells.", dir_okay=False),
    ] = None,
    url: UrlOpt = None,
    token: TokenOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="The webhook's JSON document instead of lines.")
    ] = False,
) -> None:
    """The alerts of the newest released week, as the collector's webhook sends them."""
    if (db is None) == (url is None):
        raise typer.BadParameter("give exactly one of --db and --url")
    report = _local(db) if db is not None else _remote(str(url), token)
    if report is None:
        raise typer.BadParameter("--db: no releases in that file")
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        typer.echo(report.text)


def _local(db: Path) -> AlertReport | None:
    import duckdb

    from analysis._api import open_db

    try:
        con = open_db(db)
    except FileNotFoundError:
        raise typer.BadParameter("--db: nothing there") from None
    try:
        return released_alerts(con)
    except duckdb.CatalogException:
        return None
    finally:
        con.close()


def _remote(url: str, token: str | None) -> AlertReport:
    if not token:
        raise typer.BadParameter("--url needs a team token (--token or LMCP_TEAM_TOKEN)")
    from analysis._remote import RemoteError, fetch_answer

    def ask(question: Question, period: Period) -> Answer[Row]:
        f = Filters(start=period.start, end=period.end)
        return fetch_answer(url, str(token), question, f, limit=_LIMIT)

    try:
        # The collector's default period ends at its newest released day (``analysis._period``).
        end = fetch_answer(url, token, Question.top, Filters(), limit=1).period.end
        return compute_alerts(ask, end)
    except RemoteError as exc:
        remote_failed(url, exc)
