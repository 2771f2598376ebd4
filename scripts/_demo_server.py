"""The demo's service processes, on 127.0.0.1, each in a process of its own:

    python -m scripts._demo_server collector   # the collector with triage (LMCP_COLLECTOR_*)
    python -m scripts._demo_server skills      # the Cloud Skills service (LMCP_SKILLS_*)

Settings come from the environment (set by ``scripts/demo.py``); each service opens its own
DuckDB file. A process per service keeps the simulated fleet's Python work from slowing either
event loop, and keeps the two stores apart as a deployment does.

Readiness, not deadlines (``wait_ready``, used by ``scripts/demo.py``): a service is waited for
until its ``/readyz`` answers, for as long as its process runs; only a hang (``HANG_S``) or an
exit ends the wait. The collector is ready once its seeded history is as a collector that had
been running would have stored it: each closed day rewritten, each closed period released (the
work of ``collector.retention``, done before it serves), so the first triage answer does not
wait behind 90 days of release work.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import uvicorn
from fastapi import FastAPI

from lmcp.apps import uvicorn_config

if TYPE_CHECKING:
    from collector.settings import CollectorSettings

__all__ = ["HANG_S", "main", "wait_ready"]

#: Only a hang takes this long: a start (the closed-day work included) or one triage answer
#: on a machine whose other work leaves the demo a fraction of a core.
HANG_S = 900.0


def wait_ready(proc: subprocess.Popen[bytes], url: str, what: str, log_path: Path) -> None:
    """Until ``url/readyz`` answers 200. Raises at once when ``proc`` exits, and after
    ``HANG_S`` only if it still has not answered (a hang, not a slow machine)."""
    deadline = time.monotonic() + HANG_S
    interval = 0.02
    with httpx.Client(trust_env=False, timeout=10.0) as client:
        while proc.poll() is None:
            try:
                if client.get(url + "/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {what} service hung: not ready in {HANG_S:.0f} s")
            time.sleep(interval)
            interval = min(interval * 1.5, 0.5)
    raise RuntimeError(
        f"the {what} service exited ({proc.returncode}) before it was ready (see {log_path})"
    )


def _stop_with_parent(parent: int) -> None:
    """A service outlives no demo: when the demo process is gone (even killed outright, so its
    clean-up never ran), this process stops gracefully (SIGINT: uvicorn closes the database)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch, name="demo-parent-watch", daemon=True).start()


def _closed_day_work(settings: CollectorSettings) -> None:
    """What a collector running since the history began would have done on each closed day:
    the retention job's purge, rewrite and release (``collector.retention``), in one go."""
    import duckdb

    from collector.db import migrate
    from collector.releases.store import release_closed_periods
    from collector.retention import purge_expired, reorder_closed_days
    from contract.days import utc_today

    today = utc_today()
    with duckdb.connect(str(settings.db_path)) as con:
        migrate(con)
        purge_expired(con, today, settings.retention_days)
        reorder_closed_days(con, today)
        release_closed_periods(
            con,
            today,
            settings.checked_release_plan(),
            retention_days=settings.retention_days,
            backfill_days=settings.release_backfill_days,
        )


def main(argv: list[str]) -> None:
    _stop_with_parent(os.getppid())
    # SIGTERM stops as SIGINT does: uvicorn's graceful shutdown flushes and closes the database.
    signal.signal(signal.SIGTERM, lambda *_: os.kill(os.getpid(), signal.SIGINT))
    app: FastAPI
    if argv == ["collector"]:
        from collector.settings import CollectorSettings
        from lmcp.apps import collector_app
        from lmcp.collector_cli import startup_lines, tune_serving_process

        settings = CollectorSettings()
        for line in startup_lines(settings):
            print(line, file=sys.stderr, flush=True)
        _closed_day_work(settings)
        tune_serving_process()
        app = collector_app(settings)
        options = uvicorn_config(settings, log_level="warning")
    elif argv == ["skills"]:
        from cloudskills.app import create_app
        from cloudskills.settings import SkillsSettings

        skills = SkillsSettings()
        app = create_app(skills)
        options = uvicorn_config(skills, log_level="warning")
    else:
        raise SystemExit("usage: python -m scripts._demo_server collector|skills")
    options.update(host="127.0.0.1")
    uvicorn.run(app, **options)


if __name__ == "__main__":
    main(sys.argv[1:])
