"""``make demo``: the whole pipeline on this machine, end to end.

1. Two services, each in a child process on 127.0.0.1 with its own DuckDB file under
   ``demo-output/``: the collector with triage (``signals.duckdb``, seeded with 90 days of
   synthetic history generated inside DuckDB, so the trends have a past) and the Cloud Skills
   service (``skills.duckdb``).
2. A simulated fleet of LMCP clients (``scripts/_demo_fleet.py``) on macOS, Windows and Linux and
   several versions, running the real client code over real HTTP; some have signals off. A
   signed-in author saves and recalls a Cloud Skill through the client tools.
3. The triage summary (rich tables, fetched from ``/v1/triage``), the HTML + Markdown report.
4. A check that the collector holds exactly the history plus the signals the opted-in clients
   sent, that opted-out clients made no request at all, and that the two files never share a
   table (no skills table in the signals file, no signals table in the skills file).
5. The dashboard URL and its (random, per-run) token; serves until Ctrl-C, or exits with
   ``--exit`` (``make demo DEMO_EXIT=1``) -- non-zero if the check failed. Both services stop
   on exit.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import duckdb
import httpx
from pydantic import SecretStr
from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

from analysis import Question, synthesize
from analysis._released import RELEASED_QUESTIONS
from analysis._remote import fetch_answer
from analysis.cli import answer_table
from analysis.report import build_report, write_report
from cloudskills.principals import SkillPrincipal
from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings, StewardToken
from contract.days import utc_today
from scripts._demo_fleet import (
    AUTHOR_SKILL,
    ClientResult,
    fleet_problems,
    plan_fleet,
    run_author,
    run_client,
)
from scripts._demo_server import HANG_S, wait_ready

REPO = Path(__file__).resolve().parent.parent
console = Console()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One service in a child process (``scripts/_demo_server.py``), on 127.0.0.1 only."""

    def __init__(self, service: str, port: int, env: dict[str, str], log_path: Path) -> None:
        prefix = "LMCP_COLLECTOR_" if service == "collector" else "LMCP_SKILLS_"
        self.service = service
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(prefix)}
        self.env.update(env)
        self.log_path = log_path
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def collector(cls, settings: CollectorSettings, log_path: Path) -> Server:
        env = {
            "LMCP_COLLECTOR_DB_PATH": str(settings.db_path),
            "LMCP_COLLECTOR_HOST": "127.0.0.1",
            "LMCP_COLLECTOR_PORT": str(settings.port),
            "LMCP_COLLECTOR_READ_TOKENS": json.dumps(
                [t.get_secret_value() for t in settings.read_tokens]
            ),
            "LMCP_COLLECTOR_RETENTION_DAYS": str(settings.retention_days),
            "LMCP_COLLECTOR_RATE_LIMIT_ENABLED": "false",
            "LMCP_COLLECTOR_STEWARD_TOKENS": json.dumps(
                [
                    {"label": t.label, "token": t.token.get_secret_value()}
                    for t in settings.steward_tokens
                ]
            ),
        }
        return cls("collector", settings.port, env, log_path)

    @classmethod
    def skills(cls, settings: SkillsSettings, log_path: Path) -> Server:
        principals = [
            {**p.model_dump(mode="json"), "token": p.token.get_secret_value()}
            for p in settings.principals
        ]
        env = {
            "LMCP_SKILLS_DB_PATH": str(settings.db_path),
            "LMCP_SKILLS_HOST": "127.0.0.1",
            "LMCP_SKILLS_PORT": str(settings.port),
            "LMCP_SKILLS_PRINCIPALS": json.dumps(principals),
        }
        return cls("skills", settings.port, env, log_path)

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "scripts._demo_server", self.service],
                cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            wait_ready(self.proc, self.url, self.service, self.log_path)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Graceful: SIGINT lets uvicorn flush the writer and close the database."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _history(db_path: Path, signals: int) -> set[str]:
    """Seed ``signals`` synthetic signals ending yesterday; return their ids."""
    if signals <= 0:
        return set()
    yesterday = utc_today() - dt.timedelta(days=1)
    synthesize(db_path, signals, end_day=yesterday)
    return _ids(db_path)


def _ids(db_path: Path) -> set[str]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        return {str(r[0]) for r in con.execute("SELECT signal_id FROM signals").fetchall()}


def _tables(db_path: Path) -> set[str]:
    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT internal").fetchall()
    return {str(r[0]) for r in rows}


def _verify_stores(signals_db: Path, skills_db: Path) -> list[str]:
    """Two services, two stores: problems found (empty: each file holds only its own tables)."""
    problems = []
    in_signals, in_skills = _tables(signals_db), _tables(skills_db)
    if any("skill" in t for t in in_signals):
        problems.append(f"the signals file holds a skills table: {sorted(in_signals)}")
    if "signals" in in_skills:
        problems.append("the skills file holds a signals table")
    with duckdb.connect(str(skills_db), read_only=True) as con:
        slugs = {str(r[0]) for r in con.execute("SELECT slug FROM skills").fetchall()}
    if AUTHOR_SKILL["slug"] not in slugs:
        problems.append("the author's skill is not in the skills file")
    return problems


def _run_fleet(url: str, root: Path, clients: int, seed: int, workers: int) -> list[ClientResult]:
    plans = plan_fleet(clients, seed)
    results: list[ClientResult] = []
    with Progress(
        "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
        "signals sent: {task.fields[sent]}", TimeElapsedColumn(), console=console,
    ) as progress:  # fmt: skip
        task = progress.add_task("simulated LMCP clients", total=len(plans), sent=0)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="client") as pool:
            futures = [pool.submit(run_client, plan, root, url) for plan in plans]
            sent = 0
            for future in as_completed(futures):
                result = future.result()
                results.append(result)
                sent += len(result.sent_ids)
                progress.update(task, advance=1, sent=sent)
    return results


def _summary(results: list[ClientResult]) -> None:
    opted_in = [r for r in results if r.plan.opted_in]
    off = [r for r in results if not r.plan.opted_in]
    by_platform: dict[str, int] = {}
    by_version: dict[str, int] = {}
    for r in results:
        by_platform[r.plan.platform.value] = by_platform.get(r.plan.platform.value, 0) + 1
        by_version[r.plan.version] = by_version.get(r.plan.version, 0) + 1
    console.print(
        Panel.fit(
            f"clients: {len(results)} ({len(opted_in)} with signals on, {len(off)} off)\n"
            f"platforms: {by_platform}\nversions: {by_version}\n"
            f"failures seen: {sum(r.failures for r in results)}, reports sent: "
            f"{sum(len(r.sent_ids) for r in opted_in)}, reports refused by consent: "
            f"{sum(r.not_sent for r in off)}",
            title="fleet",
        )
    )


def _verify(db_ids: set[str], history: set[str], results: list[ClientResult]) -> list[str]:
    """Problems found (empty: the collector holds exactly what it should)."""
    problems = []
    sent = [i for r in results if r.plan.opted_in for i in r.sent_ids]
    expected = history | set(sent)
    if len(sent) != len(set(sent)):
        problems.append("a signal id was reported twice")
    if db_ids != expected:
        problems.append(
            f"the collector holds {len(db_ids)} signals, expected {len(expected)} "
            f"({len(db_ids - expected)} unexpected, {len(expected - db_ids)} missing)"
        )
    problems += fleet_problems(results)
    return problems


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--exit", action="store_true", help="exit after the report")
    parser.add_argument("--clients", type=int, default=150)
    parser.add_argument(
        "--history", type=int, default=450_000, help="synthetic past signals (90 days: 5k a day)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--out", type=Path, default=REPO / "demo-output")
    args = parser.parse_args(argv)
    started = time.monotonic()
    # SIGTERM ends the demo as Ctrl-C does: through the clean-up below, which stops both
    # services (by default SIGTERM would end this process and leave them serving).
    signal.signal(signal.SIGTERM, _interrupted)

    out: Path = args.out
    stale_files = ("signals.duckdb", "signals.duckdb.wal", "skills.duckdb", "skills.duckdb.wal")
    for stale in (*stale_files, "fleet", "collector.log", "skills.log"):
        target = out / stale
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    db_path = out / "signals.duckdb"
    skills_db = out / "skills.duckdb"
    token = secrets.token_urlsafe(18)
    author_token = secrets.token_urlsafe(18)
    steward = secrets.token_urlsafe(18)

    with console.status("seeding 90 days of synthetic history (inside DuckDB)"):
        history = _history(db_path, args.history)
    settings = CollectorSettings(
        db_path=db_path,
        port=args.port or _free_port(),
        read_tokens=[SecretStr(token)],
        steward_tokens=[StewardToken(label="demo-check", token=SecretStr(steward))],
        # The default privacy parameters: the history is LMCP's real volume (5k signals a day).
        retention_days=90,
        rate_limit_enabled=False,
    )
    skills_settings = SkillsSettings(
        db_path=skills_db,
        port=_free_port(),
        principals=[
            SkillPrincipal(
                token=SecretStr(author_token),
                principal="demo-author",
                scopes=frozenset({"memory:read", "memory:write"}),
                tier="pro",
            )
        ],
    )
    server = Server.collector(settings, out / "collector.log")
    skills = Server.skills(skills_settings, out / "skills.log")
    problems: list[str] = []
    try:
        server.start()
        skills.start()
        console.print(
            f"collector up at [bold]{server.url}[/bold] ({len(history):,} past signals, "
            f"{db_path.name}); Cloud Skills up at [bold]{skills.url}[/bold] ({skills_db.name})\n"
            f"to stop: Ctrl-C, or kill {os.getpid()} (SIGTERM): both services stop with it"
        )
        results = _run_fleet(server.url, out / "fleet", args.clients, args.seed, args.workers)
        _summary(results)
        author = run_author(out / "fleet", skills.url, author_token)
        console.print(
            f"Cloud Skills: the author saved '{AUTHOR_SKILL['slug']}' "
            f"(revision {author.revision}) and recalled it: "
            f"{'ok' if author.saved and author.recalled else 'FAILED'}"
        )
        if not (author.saved and author.recalled):
            problems.append("the author could not save and recall a Cloud Skill")
        console.rule("the last 4 released weeks (a week is released 2 days after it ends)")
        answers = {
            q: fetch_answer(server.url, token, q, timeout=HANG_S) for q in RELEASED_QUESTIONS
        }
        console.print(answer_table(answers[Question.top], max_rows=8))
        console.print(answer_table(answers[Question.regressions], max_rows=8))
        trend = answers[Question.trends]
        recent = tuple(r for r in trend.rows if getattr(r, "series", "") == "all")[-10:]
        console.print(answer_table(dataclasses.replace(trend, rows=recent)))
        report = build_report(list(answers.values()), title="LMCP friction triage (demo)")
        written = write_report(report, out / "triage.html", out / "triage.md")
        for path in written:
            shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
            console.print(f"report: [bold]{shown}[/bold]")
        if args.exit:
            server.stop()
            skills.stop()
            problems += _verify(_ids(db_path), history, results)
            problems += _verify_stores(db_path, skills_db)
        else:
            count = httpx.get(
                f"{server.url}/v1/signals/count", headers={"Authorization": f"Bearer {steward}"},
                timeout=HANG_S,
            ).json()["count"]  # fmt: skip
            sent = sum(len(r.sent_ids) for r in results if r.plan.opted_in)
            if count != len(history) + sent:
                problems.append(f"collector holds {count}, expected {len(history) + sent}")
            problems += [p for p in _verify(set(), set(), results) if "holds" not in p]
        if problems:
            for problem in problems:
                console.print(f"[bold red]CHECK FAILED[/bold red] {problem}")
        else:
            console.print(
                "[bold green]check passed[/bold green]: the collector holds exactly the history "
                "plus every signal the opted-in clients sent; opted-out clients made no request"
                + ("; the signals and skills files share no table." if args.exit else ".")
            )
        console.print(f"done in {time.monotonic() - started:.1f} s")
        if args.exit:
            return 1 if problems else 0
        console.print(
            Panel.fit(
                f"dashboard: [bold]{server.url}/dashboard[/bold]\n"
                f"team token: [bold]{token}[/bold]  (this run only)\n"
                f"Cloud Skills: LMCP_SKILLS_URL={skills.url} "
                f"LMCP_SKILLS_TOKEN={author_token}\n"
                f"to stop: Ctrl-C, or kill {os.getpid()} (SIGTERM); both services stop too.",
                title="LMCP triage",
            )
        )
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 1 if problems else 0
    finally:
        try:
            server.stop()
        finally:
            skills.stop()


if __name__ == "__main__":
    sys.exit(main())
