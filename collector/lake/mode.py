"""The lake mode (``collector.mode.StorageMode``): the collector's file is a spool, shipped.

The writer stores and answers exactly as in file mode; the shipper (``collector.lake.shipper``)
moves what the file holds to the Delta table once per ``lake_ship_interval_s``. The lake is
not needed to start: until the shipper reaches it (and whenever shipping fails) ``problem``
says why, readiness answers 503, and the rows wait in the file. Triage reads a copy of the
lake's releases, the steward reads the lake; the lake's jobs (``lmcp lake``) do retention
and releases once for all collectors.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable

from collector.backup import StewardBackup
from collector.lake.config import lake_from_settings
from collector.lake.metrics import LakeMetrics
from collector.lake.served import released_database
from collector.lake.shipper import Shipper
from collector.lake.spool import Spool
from collector.lake.steward import lake_steward
from collector.read_routes import StewardReads
from collector.settings import CollectorSettings
from collector.telemetry import Telemetry
from service.db import Database

__all__ = ["LakeMode"]


class LakeMode:
    name = "lake"

    def __init__(
        self,
        settings: CollectorSettings,
        db: Database,
        telemetry: Telemetry,
        today: Callable[[], dt.date],
    ) -> None:
        self.released: Database = released_database(settings)
        steward = lake_steward(settings)
        self.reads: StewardReads = steward
        self.copies: StewardBackup = steward
        self.shipper: Shipper | None = None
        self._settings, self._db, self._telemetry, self._today = settings, db, telemetry, today

    def open(self) -> None:
        self.released.open()

    async def start(self) -> None:
        s = self._settings
        spool = await asyncio.to_thread(Spool, self._db.run_sync)
        self.shipper = Shipper(
            spool,
            lake_from_settings(s),
            LakeMetrics(self._telemetry.meter),
            interval_s=s.lake_ship_interval_s,
            max_rows=s.lake_ship_rows,
            today=self._today,
        )
        self.shipper.start()

    async def stop(self) -> None:
        if self.shipper is not None:
            await asyncio.to_thread(self.shipper.stop)

    def close(self) -> None:
        self.released.close()

    def problem(self) -> str | None:
        if self.shipper is None:
            return "the shipper has not started"
        return self.shipper.problem
