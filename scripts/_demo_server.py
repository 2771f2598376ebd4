"""The demo's collector process: ``collector.app.create_app`` under uvicorn, on 127.0.0.1.

Settings come from ``LMCP_COLLECTOR_*`` variables (set by ``scripts/demo.py``). A process of
its own keeps the simulated fleet's Python work from slowing the collector's event loop.
"""

from __future__ import annotations

import uvicorn

from collector.settings import CollectorSettings
from lmcp.apps import collector_app as create_app
from lmcp.collector_cli import tune_serving_process, uvicorn_config


def main() -> None:
    settings = CollectorSettings()
    tune_serving_process()
    options = uvicorn_config(settings, log_level="warning")
    options.update(host="127.0.0.1", port=settings.port)
    uvicorn.run(create_app(settings), **options)


if __name__ == "__main__":
    main()
