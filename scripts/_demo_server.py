"""The demo's service processes, on 127.0.0.1, each in a process of its own:

    python -m scripts._demo_server collector   # the collector with triage (LMCP_COLLECTOR_*)
    python -m scripts._demo_server skills      # the Cloud Skills service (LMCP_SKILLS_*)

Settings come from the environment (set by ``scripts/demo.py``); each service opens its own
DuckDB file. A process per service keeps the simulated fleet's Python work from slowing either
event loop, and keeps the two stores apart as a deployment does.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import uvicorn
from fastapi import FastAPI

from lmcp.apps import uvicorn_config


def _stop_with_parent(parent: int) -> None:
    """A service outlives no demo: when the demo process is gone (even killed outright, so its
    clean-up never ran), this process stops gracefully (SIGINT: uvicorn closes the database)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch, name="demo-parent-watch", daemon=True).start()


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
