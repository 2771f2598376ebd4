"""The migrations upgrade a file written with the primary key over every row.

A file migrated up to 0101 (the key on ``signals``), holding closed days already rewritten and
an open day, is upgraded by the collector's migrations (0102 drops the key and keeps the open
days' ids in ``open_ids``; 0111 drops that table, the store holding them in memory): every row
is kept, no key is left on ``signals``, no table of ids is left, closed days keep their
``signal_id`` order, and the store goes on de-duplicating against exactly the open day's ids.
"""

from __future__ import annotations

import datetime as dt

import duckdb

from collector.db import MIGRATIONS_DIR
from collector.flush import WriteResult
from collector.rows import rows_from_models
from collector.store import DuckDBStore, flush_rows
from service.db import apply_migrations, discover_migrations
from tests.collector.conftest import TODAY, make_signal


def test_an_existing_file_is_upgraded_and_keeps_its_rows() -> None:
    con = duckdb.connect(":memory:")
    before = [m for m in discover_migrations(MIGRATIONS_DIR) if m.name < "0102"]
    apply_migrations(con, before)
    closed = TODAY - dt.timedelta(days=2)
    old = [make_signal(day=closed) for _ in range(20)]
    open_day = [make_signal() for _ in range(7)]
    rows = "INSERT INTO signals BY NAME SELECT *, $1 AS received_day FROM incoming"
    for batch, day in ((old, closed), (open_day, TODAY)):
        con.register("incoming", rows_from_models(batch))
        con.execute(rows, [day])
        con.unregister("incoming")
    con.execute("INSERT INTO reordered_days VALUES ($1)", [closed])  # as the old job left it

    apply_migrations(con, MIGRATIONS_DIR)

    stored = con.execute("SELECT signal_id, received_day FROM signals ORDER BY rowid").fetchall()
    assert sorted(stored) == sorted(
        [(s.signal_id, closed) for s in old] + [(s.signal_id, TODAY) for s in open_day]
    )
    closed_ids = [sid for sid, day in stored if day == closed]
    assert closed_ids == sorted(closed_ids)  # no arrival order survives the copy
    tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name = 'open_ids'")
    assert tables.fetchall() == []
    held = DuckDBStore(con).open_ids
    assert held.days == [TODAY] and len(held) == len(open_day)
    keys = con.execute(
        "SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'signals' "
        "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')"
    ).fetchall()
    assert keys == [(0,)]
    # De-duplication goes on against the open day's ids, and not against the closed days'.
    assert flush_rows(con, [[open_day[0], old[0], make_signal()]], TODAY) == [WriteResult(2, 1)]
