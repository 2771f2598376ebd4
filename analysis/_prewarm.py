"""The dashboard's first view, drawn before anyone asks, and views shown again at once.

A page's figures are a function of the page, its filters and the released periods stored (the
releases only change when the release job stores a period or retention drops one; a stored
cell is never redrawn). ``ViewCache`` keeps computed views under that key, checked against the
``release_marker`` on every use (one small query). The charts' SVGs are cached by their spec
(``analysis._charts``).

``prewarm`` runs beside the collector (the router's lifespan): at start, and whenever the
marker moves, it computes the overview at its default filters and draws its charts, so the
first person to open the dashboard after a start or a release finds them ready; a page asked
for meanwhile waits for that work instead of doing it twice (one database thread; the chart
cache is filled under the converter's lock).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import duckdb
from starlette.concurrency import run_in_threadpool

from service.db import Database

__all__ = ["PREWARM_INTERVAL_S", "Marker", "ViewCache", "prewarm", "release_marker"]

V = TypeVar("V")
#: How often the start-up drawing looks for new releases (one small query).
PREWARM_INTERVAL_S = 30.0
#: What identifies the stored releases: periods stored, the first and the last.
Marker = tuple[int, dt.date | None, dt.date | None]
log = logging.getLogger(__name__)


def release_marker(con: duckdb.DuckDBPyConnection) -> Marker:
    """Changes whenever a period is released or dropped (periods are added after the last
    and dropped before the first; none is ever redrawn)."""
    row = con.execute("SELECT count(*), min(day), max(day) FROM release_periods").fetchone()
    return (0, None, None) if row is None else (int(row[0]), row[1], row[2])


class ViewCache(Generic[V]):
    """Computed views by key, each valid while the releases are those it was computed from.
    ``get`` runs on the database thread (it reads the marker)."""

    def __init__(self, size: int = 64) -> None:
        self._items: OrderedDict[Hashable, tuple[Marker, V]] = OrderedDict()
        self._size = size
        self._guard = threading.Lock()

    def get(self, con: duckdb.DuckDBPyConnection, key: Hashable, compute: Callable[[Any], V]) -> V:
        marker = release_marker(con)
        with self._guard:
            hit = self._items.get(key)
            if hit is not None and hit[0] == marker:
                self._items.move_to_end(key)
                return hit[1]
        value = compute(con)
        with self._guard:
            self._items[key] = (marker, value)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._guard:
            self._items.clear()


async def prewarm(
    db: Database,
    view: Callable[[duckdb.DuckDBPyConnection], V],
    draw: Callable[[V], object],
    *,
    interval_s: float = PREWARM_INTERVAL_S,
) -> None:
    """Compute ``view`` (through the cache ``view`` uses) and ``draw`` it, at start and after
    each change of the releases; runs until cancelled. A failure is logged by its kind and
    tried again at the next look."""
    drawn: Marker | None = None
    while True:
        try:
            marker = await db.run(release_marker)
            if marker != drawn and marker[0] > 0:
                await run_in_threadpool(draw, await db.run(view))
                drawn = marker
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the dashboard still answers; it draws on request
            log.warning("drawing the dashboard's first view failed: %s", type(exc).__name__)
        await asyncio.sleep(interval_s)
