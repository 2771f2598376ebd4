"""The storage section of the data catalogue: every table and column of the collector's signals
file and of the skills service's own file, after applying their migrations to in-memory DuckDBs."""

from __future__ import annotations

from typing import Any

from contract.days import PeriodKind
from lmcp.datacatalogue._model import CatalogueField, DataFormat
from lmcp.datacatalogue._text import sample, values_text
from lmcp.datacatalogue._wire import example_signal

_DUCK_KINDS = (
    ("[]", "list"),
    ("STRUCT", "object"),
    ("ENUM", "enum"),
    ("BOOLEAN", "boolean"),
    ("TIMESTAMP", "timestamp"),
    ("DATE", "date"),
    ("UUID", "uuid"),
    ("VARCHAR", "string"),
    ("BLOB", "blob"),
    ("DOUBLE", "float"),
    ("FLOAT", "float"),
    ("INT", "integer"),
)


def _duck_kind(data_type: str) -> str:
    for token, kind in _DUCK_KINDS:
        if data_type.endswith(token) if token == "[]" else token in data_type:
            return kind
    return "other"


#: The ranges shown for integer types, from their width in bits (INTEGER's is left out: its
#: columns show their CHECK constraint instead).
_UNSIGNED_BITS = {"UTINYINT": 8, "USMALLINT": 16, "UINTEGER": 32}
_SIGNED_BITS = {"TINYINT": 8, "SMALLINT": 16}
_DUCK_RANGES = {
    **{name: f"0..{2**bits - 1}" for name, bits in _UNSIGNED_BITS.items()},
    **{name: f"{-(2 ** (bits - 1))}..{2 ** (bits - 1) - 1}" for name, bits in _SIGNED_BITS.items()},
    "BOOLEAN": "true, false",
    "DATE": "YYYY-MM-DD (a UTC day)",
    "UUID": "random UUID4",
}


def _example_rows(con: Any) -> dict[str, dict[str, Any]]:
    """The example signal written by the collector's own write path, as each table/export row."""
    import datetime as _dt

    from collector.store import flush_rows

    flush_rows(con, [[example_signal()]], _dt.date(2026, 11, 30))
    cursor = con.execute("SELECT * FROM signals")
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    out = {"schema_migrations": _MIGRATION_EXAMPLE, **_RELEASE_EXAMPLES}
    if row:
        out["signals"] = dict(zip(names, row, strict=True))
    return out


#: The ledger's real rows carry the day they were applied: a fixed example keeps the doc stable.
_MIGRATION_EXAMPLE: dict[str, Any] = {
    "name": "0001_signals.sql",
    "sha256": "9f2c…(64 hex digits)",
    "applied_day": "2026-11-30",
}
#: Fixed example rows of the release, order and audit tables (collector/releases, retention,
#: collector/roles): written by the collector only, never by a client.
_RELEASE_EXAMPLES: dict[str, dict[str, Any]] = {
    "release_periods": {
        "cube": "friction",
        "day": "2026-11-23",
        "kind": "week",
        "scale": 23.6643,
        "threshold": 0,
        "cells": 1800,
        "params": "rho=0.00714286 delta=0 scale=23.6643 l0=8 l1=8 linf=1 l2=2.82843",
    },
    "release_cells": {
        "cube": "friction",
        "day": "2026-11-23",
        "key": "read_note|not_found|cannot_complete",
        "n": 1288,
    },
    "reordered_days": {"day": "2026-11-29"},
    "steward_audit": {
        "read_day": "2026-11-30",
        "label": "alice-steward",
        "route": "/v1/signals/export",
        "filter": "format=parquet&since=2026-11-01",
    },
}
COLUMN_VALUES = {
    ("schema_migrations", "name"): "a file name of collector/migrations/",
    ("schema_migrations", "sha256"): "64 hex digits",
    ("release_periods", "day"): "the period's first day (a Monday for a weekly cube)",
    ("release_periods", "kind"): " or ".join(kind.value for kind in PeriodKind),
    ("release_periods", "scale"): "the Gaussian noise's standard deviation of each cell",
    ("release_periods", "params"): "the calibration (rho, delta, scale, l0, l1, linf, l2)",
    ("release_periods", "threshold"): "0 for a known domain; ring3's threshold otherwise",
    ("release_periods", "cells"): "how many cells the period released (a known domain: all)",
    ("release_cells", "key"): "the cell's enum labels, catalogue names or version, joined by |",
    ("release_cells", "n"): "a noisy count (may be negative: noise on an empty cell)",
    ("steward_audit", "label"): "a steward token's configured label (never the token)",
    ("steward_audit", "route"): "a steward route template",
    ("steward_audit", "filter"): "the validated parameters of the read",
}


def _named_enums(data_type: str, inline: dict[str, str]) -> str:
    for literal, name in inline.items():
        data_type = data_type.replace(literal, name)
    return data_type


def storage_formats(vocabularies: dict[str, tuple[str, ...]]) -> tuple[list[DataFormat], Any]:
    """The tables of both stores: the collector's signals file and the skills service's file
    (two files, never one). Returns the formats and the (migrated) signals connection."""
    import duckdb

    from cloudskills.store import MIGRATIONS_DIR as SKILLS_MIGRATIONS
    from collector.db import migrate
    from collector.releases.cubes import CUBES
    from service.db import apply_migrations

    con = duckdb.connect(":memory:")
    migrate(con)
    cubes = ", ".join(CUBES)  # the released cubes, as collector/releases/cubes.py lists them
    formats = table_formats(
        con, vocabularies, _example_rows(con),
        "the collector's database file (collector/migrations/*.sql)",
        values={("release_periods", "cube"): cubes, ("release_cells", "cube"): cubes},
    )  # fmt: skip
    skills = duckdb.connect(":memory:")
    try:
        apply_migrations(skills, SKILLS_MIGRATIONS)
        formats += table_formats(
            skills, vocabularies, {},
            "the Cloud Skills service's own database file (cloudskills/migrations/*.sql)",
            skip=frozenset({"schema_migrations"}),  # the same ledger as the collector's
        )  # fmt: skip
    finally:
        skills.close()
    return sorted(formats, key=lambda fmt: fmt.key), con


def table_formats(
    con: Any,
    vocabularies: dict[str, tuple[str, ...]],
    examples: dict[str, dict[str, Any]],
    source: str,
    *,
    skip: frozenset[str] = frozenset(),
    prefix: str = "duckdb",
    summaries: dict[str, str] | None = None,
    values: dict[tuple[str, str], str] | None = None,
    title: str = "DuckDB table",
) -> list[DataFormat]:
    """One format per table of ``con`` (its columns, types, vocabularies and CHECKs), keyed
    ``{prefix}.{table}``; views are not tables (they hold no row of their own)."""
    inline: dict[str, str] = {}
    for name, labels in con.execute(
        "SELECT type_name, labels FROM duckdb_types() WHERE logical_type = 'ENUM' "
        "AND NOT internal ORDER BY type_name"
    ).fetchall():
        members = tuple(str(x) for x in labels)
        vocabularies.setdefault(str(name), members)
        inline["ENUM(" + ", ".join("'" + m.replace("'", "''") + "'" for m in members) + ")"] = str(
            name
        )
    checks: dict[tuple[str, str], list[str]] = {}
    for table, cols, expr in con.execute(
        "SELECT table_name, constraint_column_names, expression FROM duckdb_constraints() "
        "WHERE constraint_type = 'CHECK'"
    ).fetchall():
        for col in cols:
            checks.setdefault((str(table), str(col)), []).append(str(expr))
    rows = con.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_name IN (SELECT table_name FROM duckdb_tables() "
        "WHERE schema_name = 'main' AND NOT temporary) ORDER BY table_name, ordinal_position"
    ).fetchall()
    tables: dict[str, list[CatalogueField]] = {}
    for table, column, data_type, is_nullable in rows:
        if str(table) in skip:
            continue
        named = _named_enums(str(data_type), inline)
        kind = _duck_kind(str(data_type))
        described = (values or {}).get((str(table), str(column)))
        described = described or COLUMN_VALUES.get((str(table), str(column)))
        text = described or _DUCK_RANGES.get(named, "")
        if kind == "enum" and named in vocabularies:
            text = values_text(named, vocabularies[named])
        constraint = "; ".join(checks.get((str(table), str(column)), []))
        row = examples.get(str(table))
        tables.setdefault(str(table), []).append(
            CatalogueField(
                str(column), kind, named, is_nullable == "YES", text or constraint,
                sample(row[str(column)]) if row else "",
                "CHECK " + constraint if constraint and text else "",
            )
        )  # fmt: skip
    return [
        DataFormat(
            f"{prefix}.{table}",
            f"{title} `{table}`",
            source,
            (_TABLE_SUMMARIES if summaries is None else summaries).get(table, ""),
            tuple(fields),
        )  # fmt: skip
        for table, fields in sorted(tables.items())
    ]


_TABLE_SUMMARIES = {
    "signals": "One row per accepted signal; deleted after the retention window.",
    "schema_migrations": "Which migration files were applied (name, digest, UTC day).",
    "release_periods": "Which (cube, closed period) releases are stored, with their noise.",
    "release_cells": "Differentially private released cells: all the team role ever sees.",
    "reordered_days": "Closed days rewritten in signal_id order (so no arrival order).",
    "steward_audit": "Every steward read of raw rows or exact counts: who (label), day, what.",
    "skills": "Cloud Skills: a skill's scope and slug (authenticated content, not signals).",
    "skill_revisions": "Cloud Skills: immutable revisions written by an authenticated author.",
    "skill_components": "Cloud Skills: the files of a revision.",
    "skill_revision_state": "Cloud Skills: each revision's life-cycle status.",
    "skill_revision_events": "Cloud Skills: the append-only history of status changes.",
}
