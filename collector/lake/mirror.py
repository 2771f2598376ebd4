"""A steward's local mirror of the lake's compacted days: raw-row triage at the file's speed.

The lake's ``signals`` view re-reads Parquet and casts every value to the collector's types on
each question; a DuckDB file answers from its own typed storage. ``open_mirrored`` keeps a
DuckDB file that holds, per ``received_day``, the rows of that day's compacted files, typed
as the collector's table. A compacted file never changes (a rewrite writes new files), so a
day is copied once, and again only when its set of compacted files changes (a late append
compacted, a retention rewrite).

Invariant after ``sync``: the mirror's rows are exactly the compacted rows of the version read
(days gone from the lake are dropped), written with their file lists in one transaction, so a
crash leaves the previous mirror. Rows not compacted yet are de-duplicated at open into the
table ``mirror_open``, as the lake's view does; the view ``signals`` is both (in the file, not
temporary: a connection's cursors do not see its temporary objects).

The mirror holds raw rows: it is the steward's copy, created readable by its owner only, and it
refuses to open a file that is not a mirror of the same lake (it never overwrites a database).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb
from deltalake import DeltaTable

from collector.db import MIGRATIONS_DIR, migrate
from collector.lake.files import PARTITION, lake_files
from collector.lake.releases import LakeReleases, load_releases
from collector.lake.store import (
    LAKE_SCHEMA,
    LakeStore,
    shaped_columns,
    signal_columns,
)
from collector.lake_errors import MirrorError

__all__ = ["MirrorError", "MirrorSync", "open_mirrored", "sync"]

#: Bumped when the mirror's own tables change shape (a stale mirror is rebuilt, not migrated).
MIRROR_FORMAT = 1


@dataclass(frozen=True, slots=True)
class MirrorSync:
    """What one ``sync`` did: days copied and dropped, rows copied, rows not compacted yet."""

    days: int
    days_copied: int
    days_dropped: int
    rows_copied: int
    open_rows: int


def _fingerprint() -> str:
    """Changes whenever the collector's table or the lake's rows change shape."""
    cols, enums = signal_columns()
    migrations = sorted(p.name for p in MIGRATIONS_DIR.glob("*.sql"))
    text = json.dumps([MIRROR_FORMAT, migrations, cols, enums, LAKE_SCHEMA.to_string()])
    return hashlib.sha256(text.encode()).hexdigest()


def _create(path: Path, uri: str) -> None:
    """A new, empty mirror at ``path``, made in a private folder and moved into place."""
    folder = Path(tempfile.mkdtemp(prefix=".lmcp-mirror-", dir=path.parent))
    try:
        fresh = folder / "mirror.duckdb"
        con = duckdb.connect(str(fresh))
        try:
            con.execute("SET enable_progress_bar = false")
            migrate(con)  # the collector's ENUM types and release tables, as in a file
            con.execute("DROP TABLE signals")  # the view takes its name
            cols, _ = signal_columns()
            listed = ", ".join(f'"{name}" {kind}' for name, kind in cols)
            con.execute(f"CREATE TABLE mirror_signals ({listed})")
            con.execute("CREATE TABLE mirror_days (day DATE PRIMARY KEY, files VARCHAR[])")
            con.execute("CREATE TABLE lmcp_mirror (lake VARCHAR, fingerprint VARCHAR)")
            con.execute("INSERT INTO lmcp_mirror VALUES ($1, $2)", [uri, _fingerprint()])
            con.execute("CHECKPOINT")
        finally:
            con.close()
        fresh.chmod(0o600)
        os.replace(fresh, path)
    finally:
        for leftover in folder.iterdir():
            leftover.unlink()
        folder.rmdir()


def _connect(path: Path) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path))
    except duckdb.IOException as exc:
        text = str(exc).lower()
        if "lock" in text:
            raise MirrorError(f"the mirror {path.name} is in use by another process") from None
        if "not a valid duckdb database file" in text:
            raise MirrorError(f"{path.name} is not a DuckDB file") from None
        raise MirrorError(f"{path.name} cannot be opened") from None


def _identity(con: duckdb.DuckDBPyConnection) -> tuple[str, str] | None:
    try:
        row = con.execute("SELECT lake, fingerprint FROM lmcp_mirror").fetchone()
    except duckdb.CatalogException:
        return None
    return (str(row[0]), str(row[1])) if row else None


def open_mirrored(store: LakeStore, path: Path) -> tuple[duckdb.DuckDBPyConnection, MirrorSync]:
    """The steward's connection on the mirror at ``path`` (created if absent), synced with the
    lake's newest version: ``signals`` (each id once), ``release_periods``, ``release_cells``."""
    path = path.expanduser().resolve()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _create(path, store.uri)
    con = _connect(path)
    try:
        found = _identity(con)
        if found is None:
            raise MirrorError(f"{path.name} is not a mirror of a lake: it is left untouched")
        if found[0] != store.uri:
            raise MirrorError(f"{path.name} mirrors another lake: give a new file")
        if found[1] != _fingerprint():  # an older shape: rebuilt from the lake
            con.close()
            path.unlink()
            with contextlib.suppress(FileNotFoundError):
                Path(f"{path}.wal").unlink()
            _create(path, store.uri)
            con = _connect(path)
        con.execute("SET enable_progress_bar = false")
        load_releases(con, LakeReleases(store).read())
        done = sync(con, store, store.table())
    except BaseException:
        con.close()
        raise
    return con, done


def sync(con: duckdb.DuckDBPyConnection, store: LakeStore, table: DeltaTable) -> MirrorSync:
    """Bring the mirror on ``con`` to ``table``'s version, then rebuild the view ``signals``."""
    files = sorted(lake_files(table), key=lambda f: (f.day, f.path))
    want: dict[dt.date, list[str]] = {}
    for f in files:
        if f.compacted:
            want.setdefault(f.day, []).append(f.path)
    have = {
        day: list(paths)
        for day, paths in con.execute("SELECT day, files FROM mirror_days").fetchall()
    }
    drop = sorted(d for d, paths in have.items() if want.get(d) != paths)
    add = sorted(d for d, paths in want.items() if have.get(d) != paths)
    shaped = shaped_columns(con)
    reader = store.reader(table)
    copied = 0
    con.execute("BEGIN TRANSACTION")
    try:
        if drop:
            con.execute(f"DELETE FROM mirror_signals WHERE list_contains($1, {PARTITION})", [drop])
            con.execute("DELETE FROM mirror_days WHERE list_contains($1, day)", [drop])
        if add:
            wanted = set(add)
            new = [f for f in files if f.compacted and f.day in wanted]
            reader.scan(con, "_mirror_new", new, LAKE_SCHEMA)
            found = con.execute(
                f"INSERT INTO mirror_signals SELECT {shaped} FROM _mirror_new"
            ).fetchone()
            copied = int(found[0]) if found else 0
            con.executemany("INSERT INTO mirror_days VALUES (?, ?)", [[d, want[d]] for d in add])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    open_files = [f for f in files if not f.compacted]
    reader.scan(con, "_mirror_open_scan", open_files, LAKE_SCHEMA)
    # Rows not compacted yet: each id once (the earliest received day), minus ids compacted.
    con.execute(
        f"""
        CREATE OR REPLACE TABLE mirror_open AS
        SELECT {shaped} FROM (
            SELECT * FROM _mirror_open_scan
            QUALIFY row_number() OVER (PARTITION BY signal_id ORDER BY {PARTITION}) = 1
        )
        """
    )
    con.execute("DELETE FROM mirror_open WHERE signal_id IN (SELECT signal_id FROM mirror_signals)")
    found_open = con.execute("SELECT count(*) FROM mirror_open").fetchone()
    open_rows = int(found_open[0]) if found_open else 0
    # With nothing open (every day compacted) the view is the table: no union to plan around.
    union = " UNION ALL SELECT * FROM mirror_open" if open_rows else ""
    con.execute(f"CREATE OR REPLACE VIEW signals AS SELECT * FROM mirror_signals{union}")
    return MirrorSync(len(want), len(add), len(drop), copied, open_rows)
