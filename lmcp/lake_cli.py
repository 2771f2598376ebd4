"""``lmcp lake``: the lake's jobs (compact, release, retain, ship), its status, and the
stewards' audit trail (``docs/lake-deployment.md``).

``--lake URI`` (or ``LMCP_COLLECTOR_LAKE_URI``) names the table; S3 credentials come from the
``LMCP_COLLECTOR_LAKE_S3_*`` settings. Each job is safe while collectors write and idempotent:
run it from cron, one instance at a time.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from collector.lake.releases import ReleaseResult
    from collector.lake.store import LakeStore

__all__ = ["app"]

app = typer.Typer(
    name="lake",
    help="The Delta Lake table of a multi-collector deployment.",
    no_args_is_help=True,
    add_completion=False,
)

LakeOpt = Annotated[
    str | None,
    typer.Option("--lake", help="The table: a folder or s3://bucket/prefix.", show_default=False),
]
TodayOpt = Annotated[
    str | None, typer.Option("--today", help="Today (UTC) as YYYY-MM-DD (default: the clock).")
]
MemoryOpt = Annotated[
    str | None,
    typer.Option(
        "--memory-limit",
        help="DuckDB's memory for the job, e.g. 2GB or 512MB; past it, it spills to TMPDIR "
        "(default 2GB).",
        show_default=False,
    ),
]
DaysOpt = Annotated[
    int | None, typer.Option(min=1, help="Retention (default: LMCP_COLLECTOR_RETENTION_DAYS).")
]


def _need_lake() -> None:
    """Exit with one line when the ``[lake]`` extra (deltalake) is not installed."""
    from collector.lake_errors import LAKE_EXTRA
    from lmcp._optional import import_optional

    if import_optional("deltalake") is None:
        typer.echo(LAKE_EXTRA)
        raise typer.Exit(1)


@app.callback()
def _lake_extra() -> None:
    """Every command needs the [lake] extra: say so before any of them imports it."""
    _need_lake()


def _store(lake: str | None) -> LakeStore:
    from collector.lake.config import lake_from_settings
    from collector.settings import CollectorSettings
    from service.settings import load_settings

    try:
        store = lake_from_settings(load_settings(CollectorSettings), lake)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if not store.exists():
        typer.echo("no table there yet")
        raise typer.Exit(1)
    return store


def _memory(value: str | None) -> str:
    from collector.lake.bounded import DEFAULT_MEMORY_LIMIT, check_memory_limit

    try:
        return check_memory_limit(value if value is not None else DEFAULT_MEMORY_LIMIT)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--memory-limit") from None


def _today(value: str | None) -> dt.date:
    if value is None:
        from contract.days import utc_today

        return utc_today()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter("--today must be a date like 2026-01-31") from None


OpenDayOpt = Annotated[
    bool,
    typer.Option(
        "--open-day",
        help="Also fold today's new files into compacted ones (hourly, beside the collectors).",
    ),
]


@app.command()
def compact(
    lake: LakeOpt = None,
    today: TodayOpt = None,
    memory_limit: MemoryOpt = None,
    open_day: OpenDayOpt = False,
) -> None:
    """Rewrite each closed day not compacted yet: each id once, ordered, in few files."""
    from collector.lake.jobs import compact as run

    memory = _memory(memory_limit)
    results = run(_store(lake), _today(today), memory_limit=memory, open_day=open_day)
    for r in results:
        typer.echo(
            f"{r.day}: {r.rows_before} rows in {r.files_before} files -> "
            f"{r.rows_after} rows in {r.files_after} files"
        )
    typer.echo(f"compacted {len(results)} day(s)")


@app.command()
def ship(
    db: Annotated[
        Path, typer.Option("--db", help="A stopped collector's file (its spool).", exists=True)
    ],
    lake: LakeOpt = None,
) -> None:
    """Ship what a stopped collector's file still holds to the lake (once, idempotent)."""
    from collector.lake.config import lake_from_settings
    from collector.lake.shipper import ship_file
    from collector.settings import CollectorSettings

    try:
        store = lake_from_settings(CollectorSettings(), lake)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    typer.echo(f"shipped {ship_file(db, store)} row(s)")


@app.command()
def release(
    lake: LakeOpt = None,
    today: TodayOpt = None,
    days: DaysOpt = None,
    memory_limit: MemoryOpt = None,
) -> None:
    """Release each closed period not released yet whose received days are all compacted:
    computed once, never redrawn (weekly cubes by week, ``daily`` by day; empty ones too).

    The privacy parameters come from the collector's settings (LMCP_COLLECTOR_RELEASE_*,
    refused past its epsilon ceiling). Periods before the retention window (or
    LMCP_COLLECTOR_RELEASE_BACKFILL_DAYS back) are never released. With
    LMCP_COLLECTOR_ALERT_WEBHOOK_URL, the alerts of a newly released week are POSTed there."""
    from collector.lake.releases import release as run
    from collector.settings import CollectorSettings
    from service.settings import load_settings

    settings = load_settings(CollectorSettings)
    window = days if days is not None else settings.retention_days
    memory = _memory(memory_limit)
    try:
        plan = settings.checked_release_plan()
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    store = _store(lake)
    results = run(
        store,
        _today(today),
        plan,
        retention_days=window,
        backfill_days=settings.release_backfill_days,
        memory_limit=memory,
    )
    periods = 0
    for r in results:
        what = " and ".join(f"the {kind}" for kind in r.kinds)
        if r.status == "released":
            periods += len(r.kinds)
            typer.echo(f"{r.day}: released {what}, {r.cells} cell(s)")
        else:
            typer.echo(f"{r.day}: {what} released by another job meanwhile (kept as it is)")
    typer.echo(f"released {periods} period(s)")
    if settings.alert_webhook_url is not None:
        _alert(store, str(settings.alert_webhook_url), results)


def _alert(store: LakeStore, url: str, results: list[ReleaseResult]) -> None:
    """The file mode's alerts, for what this run released (the URL is a secret: never shown)."""
    from analysis.alerts import on_release
    from collector.lake.releases import send_lake_alerts
    from collector.webhook import Webhook

    sent = send_lake_alerts(store, Webhook(url, on_release), results)
    if sent is None:
        typer.echo("alerts: none to send")
    elif sent:
        typer.echo("alerts: sent to the webhook")
    else:  # the job did its work: the releases are committed
        typer.echo("alerts: not delivered (the webhook failed; see the log)")


@app.command()
def retain(
    lake: LakeOpt = None,
    today: TodayOpt = None,
    days: DaysOpt = None,
    grace_hours: Annotated[
        int, typer.Option(min=0, help="Keep removed files this long for running readers.")
    ] = 1,
) -> None:
    """Delete the signals outside the retention window and VACUUM their files away."""
    from collector.lake.jobs import retain as run
    from collector.settings import CollectorSettings
    from service.settings import load_settings

    window = days if days is not None else load_settings(CollectorSettings).retention_days
    result = run(_store(lake), _today(today), window, grace_hours=grace_hours)
    typer.echo(
        f"deleted {result.rows_deleted} row(s) and {result.released_rows_deleted} released "
        f"row(s) before {result.first_kept}; vacuumed "
        f"{result.files_vacuumed + result.release_files_vacuumed} file(s)"
    )


@app.command()
def status(lake: LakeOpt = None) -> None:
    """Per received day: files, rows (duplicates included until compacted), size, compacted;
    then the released periods."""
    from collector.lake.releases import LakeReleases
    from collector.releases.cubes import CUBES
    from contract.days import PeriodKind

    store = _store(lake)
    days = store.days()
    periods = LakeReleases(store).periods()
    typer.echo(f"version {store.table().version()}, {len(days)} day(s)")
    for d in days:
        flag = "compacted" if d.compacted else "open"
        typer.echo(f"{d.day}  {d.files:>5} files  {d.rows:>10} rows  {d.bytes:>12} B  {flag}")
    for kind in PeriodKind:
        firsts = sorted({day for cube, day in periods if CUBES[cube].kind is kind})
        span = f", {firsts[0]} to {firsts[-1]}" if firsts else ""
        typer.echo(f"released {len(firsts)} {kind.value} period(s){span}")


@app.command()
def audit(
    lake: LakeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
) -> None:
    """Every steward read any lake collector served: day, token label, route, filter."""
    from collector.lake.steward import LakeAudit

    rows = LakeAudit(_store(lake)).rows()
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "read_day": r.read_day.isoformat(),
                        "label": r.label,
                        "route": r.route,
                        "filter": r.filter,
                    }
                    for r in rows
                ],  # fmt: skip
                indent=2,
            )
        )
        return
    if not rows:
        typer.echo("no steward read recorded")
        return
    label_w = max(len("label"), *(len(r.label) for r in rows))
    route_w = max(len("route"), *(len(r.route) for r in rows))
    typer.echo(f"{'read_day':<10}  {'label':<{label_w}}  {'route':<{route_w}}  filter")
    for r in rows:
        typer.echo(f"{r.read_day}  {r.label:<{label_w}}  {r.route:<{route_w}}  {r.filter}")
    typer.echo(f"{len(rows)} read(s)")
