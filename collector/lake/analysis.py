"""What the analysis package reads from a lake, through ``collector.mode.open_lake_analysis``
(imported only there, after the ``[lake]`` extra was checked)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from collector.lake.config import lake_from_settings
from collector.lake.releases import connect
from collector.settings import CollectorSettings

__all__ = ["open_lake"]


def open_lake(
    uri: str, *, raw: bool = False, mirror: Path | None = None
) -> duckdb.DuckDBPyConnection:
    """See ``collector.mode.open_lake_analysis``."""
    store = lake_from_settings(CollectorSettings(), uri)
    if not store.exists():
        raise FileNotFoundError("no Delta table at the given URI")
    if mirror is not None:
        if not raw:
            raise ValueError("a mirror holds raw rows: it needs raw=True")
        from collector.lake.mirror import open_mirrored

        return open_mirrored(store, mirror)[0]
    return connect(store, raw=raw)
