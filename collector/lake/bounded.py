"""A DuckDB connection for the lake's daily jobs whose memory is bounded, whatever a day holds.

Past ``memory_limit``, DuckDB's sorts, joins, windows and aggregates spill to a temporary
folder of their own (under ``TMPDIR``: put it on a disk with room for a day, not on a RAM
disk), deleted when the connection closes. The rows themselves are scanned lazily from the
day's files (``collector.lake.files``), never copied in.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

__all__ = [
    "BYTES_PER_THREAD",
    "DEFAULT_MEMORY_LIMIT",
    "MIN_MEMORY_LIMIT",
    "bounded_connection",
    "check_memory_limit",
    "memory_bytes",
    "spill_folder",
]

#: DuckDB's budget per job: a small cron host has it, and a day of any size fits through it.
DEFAULT_MEMORY_LIMIT = "2GB"
MIN_MEMORY_LIMIT = 16 * 1000**2
#: Memory per DuckDB thread: each thread of a join or window holds buffers of its own, so a
#: small budget runs on fewer threads rather than failing.
BYTES_PER_THREAD = 512 * 1000**2
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B)", re.IGNORECASE)


def memory_bytes(value: str) -> int:
    """The bytes of a memory size DuckDB reads (``64MB``, ``2GB``, ``1GiB``) of at least
    ``MIN_MEMORY_LIMIT``; else ``ValueError``. Never unlimited, never a share of the RAM: the
    budget is what bounds the job."""
    found = _SIZE.fullmatch(value.strip())
    if found is None:
        raise ValueError(f"not a memory size: {value!r} (for example 2GB or 512MB)")
    number, unit = float(found.group(1)), found.group(2).upper()
    base = 1024 if unit.endswith("IB") else 1000
    size = int(number * base ** ("KMGT".index(unit[0]) + 1))
    if size < MIN_MEMORY_LIMIT:
        raise ValueError(f"a memory limit below 16MB leaves DuckDB no room: {value!r}")
    return size


def check_memory_limit(value: str) -> str:
    """``value``, stripped, if ``memory_bytes`` takes it; else ``ValueError``."""
    memory_bytes(value)
    return value.strip()


def spill_folder(con: duckdb.DuckDBPyConnection) -> Path:
    """A folder of its own inside ``con``'s spill folder (removed with it)."""
    found = con.execute("SELECT current_setting('temp_directory')").fetchall()
    return Path(tempfile.mkdtemp(prefix="job-", dir=str(found[0][0])))


@contextmanager
def bounded_connection(
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory connection that spills past ``memory_limit``; its spill folder is removed
    when it closes (a job killed meanwhile leaves it in ``TMPDIR``, where the OS cleans up)."""
    limit = check_memory_limit(memory_limit)
    threads = max(1, min(os.cpu_count() or 1, memory_bytes(limit) // BYTES_PER_THREAD))
    with tempfile.TemporaryDirectory(prefix="lmcp-lake-spill-") as spill:
        config: dict[str, str | bool | int | float | list[str]] = {
            "memory_limit": limit,
            "temp_directory": spill,
            "threads": threads,
        }
        con = duckdb.connect(":memory:", config=config)
        try:
            con.execute("SET enable_progress_bar = false")
            yield con
        finally:
            con.close()
