"""What a lake collector's triage routes read: a copy of the lake's released cells.

``ReleasedDatabase`` is a ``Database`` in memory with the collector's migrations, so the
routes find ``release_periods`` and ``release_cells`` exactly as in the file and run unchanged.
Before each use it copies the lake's releases table in again if its version changed (looked
up at most every ``refresh_s``). Its ``signals`` table stays empty, and the routes only read
releases (the file mode releases every closed period, empty ones too, but in its retention
job, not here): a lake collector never draws noise; only ``lmcp lake release`` does, once
per period.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

import duckdb

from collector.db import MIGRATIONS_DIR
from collector.lake.config import lake_from_settings
from collector.lake.releases import LakeReleases, load_releases
from collector.settings import CollectorSettings
from service.db import Database

__all__ = ["REFRESH_S", "ReleasedDatabase", "released_database"]

T = TypeVar("T")
#: Releases change once a day (the job): a lookup of the table's version a minute is plenty.
REFRESH_S = 60.0

log = logging.getLogger("collector")


class ReleasedDatabase(Database):
    """The lake's released cells in an in-memory DuckDB, refreshed when the table changes."""

    def __init__(
        self,
        releases: LakeReleases,
        *,
        refresh_s: float = REFRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(":memory:", MIGRATIONS_DIR, threads=1, logger=log)
        self.releases = releases
        self._refresh_s = refresh_s
        self._clock = clock
        self._checked: float | None = None
        self._version: int | None = None

    def _fresh(self, con: duckdb.DuckDBPyConnection) -> None:
        # On the database thread only: no two calls run at once.
        now = self._clock()
        if self._checked is not None and now - self._checked < self._refresh_s:
            return
        self._checked = now
        try:
            version = self.releases.version()
            if version is not None and version != self._version:
                load_releases(con, self.releases.read())
                self._version = version
        except Exception as exc:  # keep serving the last copy; the next lookup tries again
            log.error("reading the lake's releases failed: %s", type(exc).__name__)

    def run_sync(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        return super().run_sync(lambda con: self._then(con, fn))

    async def run(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        return await super().run(lambda con: self._then(con, fn))

    def _then(
        self, con: duckdb.DuckDBPyConnection, fn: Callable[[duckdb.DuckDBPyConnection], T]
    ) -> T:
        self._fresh(con)
        return fn(con)


def released_database(settings: CollectorSettings) -> ReleasedDatabase:
    """The routers' database of a collector serving ``settings.lake_uri`` (not yet open)."""
    return ReleasedDatabase(LakeReleases(lake_from_settings(settings)))
