"""``make demo-lake``: the lake mode end to end, on this machine, with nothing left running.

1. SeaweedFS (``weed server`` with its S3 gateway) on loopback ports, in a folder of its own.
2. Three collectors (``lmcp collector serve --lake s3://lake/signals``), each appending its
   flushes to the one Delta table; 90 days of synthetic history appended first.
3. A simulated fleet of real LMCP clients (``scripts/_demo_fleet.py``), spread over the three
   collectors; then a burst of batches from senders that retry on the next collector, during
   which one collector is SIGKILLed.
4. ``lmcp lake compact`` (today's day closed early, as tomorrow's run would) and ``lmcp lake
   release`` (this week closed early, as the run three days after its Sunday would: every
   weekly and daily period of the window), status before and after, and the triage
   questions read from the lake: the team's released view and the steward's exact view,
   also through the steward's mirror; a lake collector answers the steward's count from the
   lake, audited in the lake.
5. An exact check: the table holds each acknowledged signal exactly once, and nothing else
   but signals stored whose answer came too late to count as acknowledged (shown as such: a
   client resends them, and the lake reads each id once); every period is released once;
   opted-out clients made no request. Exit status 1 if not.
Every server is stopped at the end, also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import secrets
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import httpx
import pyarrow.compute as pc
from rich.console import Console
from rich.panel import Panel

from analysis import Filters, Question, synthesize
from analysis.cli import answer_table
from analysis.report import answer_all
from collector.lake.jobs import compact
from collector.lake.load import lake_rows_from_duckdb
from collector.lake.mirror import open_mirrored
from collector.lake.releases import LakeReleases, connect, due_periods, release
from collector.lake.steward import LakeAudit
from collector.lake.store import LakeStore
from contract.accountant import ReleasePlan
from contract.days import PeriodKind, period_end, utc_today
from contract.limits import LATE_DAYS
from lakedev.frontdoor import FrontDoor
from lakedev.seaweed import LoopbackSeaweed
from scripts._demo_fleet import ClientResult, fleet_problems, plan_fleet, run_client
from scripts._lake_cluster import Collectors, send_load

REPO = Path(__file__).resolve().parent.parent
#: The collectors' default retention window: the release job releases no period before it.
WINDOW = 90


def release_day(today: dt.date) -> dt.date:
    """The first day this week is closed (``contract.days.closed``): its releases hold the
    demo's own signals."""
    return period_end(PeriodKind.week, today) + dt.timedelta(days=LATE_DAYS + 1)


console = Console()


def _status(store: LakeStore, title: str) -> None:
    days = store.days()
    files = sum(d.files for d in days)
    rows = sum(d.rows for d in days)
    today = days[-1] if days else None
    console.print(
        f"[bold]{title}[/bold]: version {store.table().version()}, {len(days)} days, "
        f"{files} files, {rows:,} rows stored"
        + (f"; today: {today.files} files, {today.rows:,} rows" if today else "")
    )


def _history(store: LakeStore, root: Path, signals: int) -> set[str]:
    """``signals`` synthetic past signals (ending yesterday) appended in one commit."""
    if signals <= 0:
        return set()
    db = root / "history.duckdb"
    synthesize(db, signals, end_day=utc_today() - dt.timedelta(days=1))
    with duckdb.connect(str(db), read_only=True) as con:
        store.append(lake_rows_from_duckdb(con))
        return {str(r[0]) for r in con.execute("SELECT signal_id FROM signals").fetchall()}


def _fleet(urls: list[str], root: Path, clients: int, seed: int) -> list[ClientResult]:
    plans = plan_fleet(clients, seed)
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="client") as pool:
        futures = [
            pool.submit(run_client, plan, root, urls[i % len(urls)]) for i, plan in enumerate(plans)
        ]
        return [f.result() for f in futures]


def _lake_ids(store: LakeStore) -> list[str]:
    con = duckdb.connect()
    try:
        store.signals_relation(con)
        return [str(r[0]) for r in con.execute("SELECT signal_id FROM signals").fetchall()]
    finally:
        con.close()


def _late(results: list[ClientResult], ids: set[str]) -> tuple[list[ClientResult], set[str]]:
    """The fleet with its stored-but-unacknowledged signals counted as delivered (their
    answer came after the client gave up: it keeps them and resends; the lake reads each id
    once), and those ids."""
    late: set[str] = set()
    out = []
    for r in results:
        stored = [i for i in r.queued_ids if i in ids]
        late.update(stored)
        out.append(dataclasses.replace(r, not_sent=r.not_sent - len(stored)))
    return out, late


def _check(
    store: LakeStore, expected: set[str], results: list[ClientResult], released_on: dt.date
) -> tuple[list[str], set[str]]:
    problems = []
    ids = _lake_ids(store)
    if store.count() != len(ids):
        problems.append(f"{store.count()} rows stored for {len(ids)} distinct signals")
    results, late = _late(results, set(ids))
    if set(ids) != expected | late:
        problems.append(
            f"the lake holds {len(set(ids))} signals, expected {len(expected)} "
            f"({len(set(ids) - expected - late)} unexpected, {len(expected - set(ids))} missing)"
        )
    # every closed period in the window released once: one record per cube and period
    due = due_periods(store.days(), set(), released_on, WINDOW, backfill_days=WINDOW)
    wanted = sorted((cube, day) for day, cubes in due.items() for cube in cubes)
    table = LakeReleases(store).read()
    records = table.filter(pc.is_null(table.column("key")))
    cols = [records.column(c).to_pylist() for c in ("cube", "day")]
    got = sorted(zip(*cols, strict=True))
    if got != wanted:
        problems.append(f"{len(got)} released (cube, period) records for {len(wanted)} periods")
    problems += fleet_problems(results)
    return problems, late


def _steward(
    store: LakeStore, uri: str, env: dict[str, str], root: Path, expected: int
) -> list[str]:
    """A lake collector started after the load answers the steward's count from the lake
    (its own file holds no signal), and the read lands in the lake's one audit trail."""
    token = secrets.token_urlsafe(24)
    stewards = json.dumps([{"label": "demo-steward", "token": token}])
    with Collectors(1, uri, {**env, "LMCP_COLLECTOR_STEWARD_TOKENS": stewards}, root) as one:
        answer = httpx.get(
            one.urls[0] + "/v1/signals/count",
            headers={"Authorization": f"Bearer {token}"},
            trust_env=False,
            timeout=60,
        )
    count = answer.json().get("count") if answer.status_code == 200 else None
    audited = [r for r in LakeAudit(store).rows() if r.label == "demo-steward"]
    console.print(
        f"a lake collector's steward count: {count}; the lake's audit trail: "
        f"{len(audited)} read(s) by demo-steward"
    )
    problems = []
    if count != expected:
        problems.append(f"the steward's count on a lake collector is {count}, not {expected}")
    if len(audited) != 1:
        problems.append(f"{len(audited)} audit rows for one steward read")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=60)
    parser.add_argument("--history", type=int, default=8_000, help="synthetic past signals")
    parser.add_argument("--load", type=int, default=20_000, help="signals in the retried burst")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=REPO / "demo-output" / "lake")
    args = parser.parse_args(argv)
    started = time.monotonic()
    out: Path = args.out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    today = utc_today()

    with console.status("starting SeaweedFS (S3 gateway on loopback)"):
        seaweed = LoopbackSeaweed(folder=out / "seaweedfs").start()
    try:
        uri = seaweed.uri("signals")
        store = LakeStore(uri, seaweed.storage_options)
        console.print(f"SeaweedFS S3 at [bold]{seaweed.endpoint}[/bold]; table [bold]{uri}[/bold]")
        with console.status("seeding 90 days of synthetic history"):
            expected = _history(store, out, args.history)
        env = {
            "LMCP_COLLECTOR_LAKE_S3_ENDPOINT": seaweed.endpoint,
            "LMCP_COLLECTOR_LAKE_S3_KEY_ID": seaweed.key_id,
            "LMCP_COLLECTOR_LAKE_S3_SECRET": seaweed.secret,
            "LMCP_COLLECTOR_LAKE_S3_ALLOW_HTTP": "true",
            "LMCP_COLLECTOR_LAKE_SHIP_INTERVAL_S": "2",
        }
        with (
            Collectors(3, uri, env, out) as cluster,
            FrontDoor([m.address for m in cluster.members], folder=out) as door,
        ):
            console.print(
                f"collectors: {', '.join(cluster.urls)}, behind haproxy at [bold]{door.url}[/bold]"
            )
            with console.status(f"{args.clients} simulated LMCP clients"):
                results = _fleet([door.url], out / "fleet", args.clients, args.seed)
            sent = {i for r in results if r.plan.opted_in for i in r.sent_ids}
            console.print(f"fleet: {len(results)} clients, {len(sent)} signals reported")
            victim = cluster.members[0]

            def kill_midway(answered: int) -> None:
                if answered == max(1, args.load // 200):
                    victim.kill()

            with console.status(f"{args.load:,} signals from retrying senders; one collector dies"):
                load = send_load(
                    [door.url], signals=args.load, batch=100, senders=6,
                    day=today.isoformat(), seed=args.seed, on_progress=kill_midway,
                )  # fmt: skip
            console.print(
                f"burst: {len(load.acknowledged):,} acknowledged in {load.seconds:.1f} s "
                f"({len(load.acknowledged) / load.seconds:,.0f} signals/s); {victim.url} was "
                f"SIGKILLed, {load.retries} request(s) failed at the client"
            )
            with console.status("the killed collector starts again on its own file"):
                cluster.restart(0)
        # Every collector stopped gracefully: each shipped what its file still held.
        expected |= sent | load.acknowledged
        _status(store, "before compaction")
        with console.status("compacting every closed day (today closed early)"):
            compacted = compact(store, today + dt.timedelta(days=1))
        console.print(f"compacted {len(compacted)} days")
        _status(store, "after compaction")
        released_on = release_day(today)
        with console.status("releasing every closed period, once (this week closed early)"):
            released = release(store, released_on, ReleasePlan(), retention_days=WINDOW,
                               backfill_days=WINDOW)  # fmt: skip
        periods = sum(len(r.kinds) for r in released)
        console.print(
            f"released {periods} periods (weeks and days) in {len(released)} commits, "
            f"{sum(r.cells for r in released):,} cells in all"
        )
        # The route's count against the lake's own view (the exact check of what the lake
        # holds against what was acknowledged is ``_check``'s).
        problems = _steward(store, uri, env, out, len(_lake_ids(store)))
        con = connect(store, raw=True)
        try:
            console.rule("the team's view: released cells, read from the lake")
            for answer in answer_all(con, Filters(), questions=(Question.trends, Question.top)):
                console.print(answer_table(answer, max_rows=6))
            console.rule("the steward's view (--exact): raw rows, read from the lake")
            answers = {a.question: a for a in answer_all(con, Filters(), exact=True)}
            for q in (Question.top, Question.regressions, Question.apps):
                console.print(answer_table(answers[q], max_rows=6))
            mirror, synced = open_mirrored(store, out / "mirror.duckdb")
            try:
                console.print(
                    f"the steward's mirror (--mirror): {synced.days_copied} days copied, "
                    f"{synced.rows_copied:,} rows"
                )
                if answer_all(mirror, Filters(), exact=True) != list(answers.values()):
                    problems.append("the steward's mirror answers differently from the lake")
            finally:
                mirror.close()
        finally:
            con.close()
        checked, late = _check(store, expected, results, released_on)
        problems += checked
        if late:
            console.print(
                f"{len(late)} signal(s) stored whose answer came after their client gave up "
                "(still in its outbox, resent later; the lake reads each once)"
            )
    finally:
        seaweed.stop()
    for problem in problems:
        console.print(f"[bold red]CHECK FAILED[/bold red] {problem}")
    if any(why.isdigit() for why in load.failures):  # an error status reached a client
        why = ", ".join(f"{n} x {reason}" for reason, n in load.failures.most_common())
        problems.append(
            f"{load.retries} request(s) failed behind the front door ({why}; "
            f"{out / 'haproxy.log'} has each request)"
        )
    if not problems:
        console.print(
            Panel.fit(
                f"[bold green]check passed[/bold green]: the lake holds each of the "
                f"{len(expected):,} acknowledged signals exactly once and nothing else; "
                "every period in the window is released once; a lake collector's steward "
                "count equals it, audited in the lake; the steward's mirror answers as the "
                "lake; opted-out clients made no request.\nEvery server is stopped.",
                title="lake demo",
            )
        )
    console.print(f"done in {time.monotonic() - started:.1f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
