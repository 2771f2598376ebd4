"""The data catalogue, generated from the code: every field of every format the pipeline keeps.

``lmcp signals catalogue`` prints it; ``docs/data-catalogue.md`` is its Markdown rendering (a
test fails when the two differ); the privacy audit compares it with the reviewed catalogue
(``privacy_tests/data_catalogue.json``), so a new field fails the audit until a reviewer
classifies it.

Sources, all read from the code rather than written by hand:

- the wire: ``FrictionSignal`` / ``SignalBatch`` (types, bounds, vocabularies) and the sender's
  fixed HTTP headers;
- the client's own files under ``LMCP_HOME`` (settings, outbox, sent log, latest failure);
- storage: every table and column after applying ``collector/migrations/*.sql`` (the signals
  file) and ``cloudskills/migrations/*.sql`` (the skills service's own file) to in-memory
  DuckDBs (needs the ``collector`` extra);
- exports: the columns of ``/v1/signals/export`` as Parquet and CSV, produced by running the
  export SQL and writers on an empty database.

Only the standard library is imported at module level; pydantic, DuckDB and pyarrow load when a
section is generated. Without the collector extra, the storage and export sections are omitted
and the output says so.
"""

from __future__ import annotations

import datetime as dt
import enum
import io
import json
import re
import types
import typing
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lmcp.privacy_params import privacy_json, privacy_markdown, privacy_parameters

__all__ = [
    "CatalogueField",
    "DataCatalogue",
    "DataFormat",
    "generate",
    "render_json",
    "render_markdown",
]

#: Vocabularies longer than this are listed once, in the vocabulary section, not per field.
_INLINE_VALUES = 8


@dataclass(frozen=True, slots=True)
class CatalogueField:
    """One field of one format."""

    name: str
    #: Structural kind: literal, enum, boolean, integer, float, date, timestamp, uuid, string,
    #: list, object, blob.
    kind: str
    type: str
    nullable: bool
    values: str
    example: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class DataFormat:
    key: str
    title: str
    where: str
    summary: str
    fields: tuple[CatalogueField, ...]


@dataclass(frozen=True, slots=True)
class DataCatalogue:
    formats: tuple[DataFormat, ...]
    vocabularies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    omitted: tuple[str, ...] = ()

    def fields(self) -> Iterator[tuple[str, CatalogueField]]:
        for fmt in self.formats:
            for item in fmt.fields:
                yield fmt.key, item


# -- the wire model ----------------------------------------------------------------------------


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _example_signal() -> Any:
    from contract.schema import FrictionSignal

    doc = {
        "schema_version": 2,
        "signal_id": "0b7f2c1e-6a43-4a8e-9a51-2f1d3c4b5a69",
        "day": "2026-11-30",
        "friction_type": "repeated_failure",
        "error_category": "not_found",
        "intent_category": "manage_note",
        "tool_attempted": "read_note",
        "attempts": "3-5",
        "error_class": "not_found",
        "args": [{"name": "note_name", "type": "string", "size": "17-256"}],
        "ring": [
            {"tool": "list_notes", "outcome": "ok"},
            {"tool": "read_note", "outcome": "failed"},
        ],
        "app": {"installed": True, "running": True, "permitted": True},
        "client": {"version": "1.4.2", "platform": "macos"},
    }
    return FrictionSignal.model_validate_json(json.dumps(doc))


def _pick(doc: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(doc, list):
            doc = doc[0] if doc else None
        if part.endswith("[]"):
            part = part[:-2]
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc


class _Walker:
    def __init__(self, vocabularies: dict[str, tuple[str, ...]]) -> None:
        self.vocabularies = vocabularies
        self.out: list[CatalogueField] = []

    def model(self, model: Any, prefix: str, example: Any) -> None:
        for name, info in model.model_fields.items():
            path = f"{prefix}{name}"
            note = info.description or ""
            self.leaf(path, info.annotation, list(info.metadata), example, note)

    def leaf(self, path: str, annotation: Any, meta: list[Any], example: Any, note: str) -> None:
        from pydantic import BaseModel

        nullable = False
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            base, *extra = typing.get_args(annotation)
            for item in extra:
                meta += [item, *getattr(item, "metadata", [])]
            self.leaf(path, base, meta, example, note)
            return
        if origin in (typing.Union, types.UnionType):
            options = [a for a in typing.get_args(annotation) if a is not type(None)]
            nullable = len(options) < len(typing.get_args(annotation))
            annotation = options[0]
            origin = typing.get_origin(annotation)
            if origin is typing.Annotated:
                base, *extra = typing.get_args(annotation)
                for item in extra:
                    meta += [item, *getattr(item, "metadata", [])]
                annotation = base
                origin = typing.get_origin(annotation)
        sample = _pick(example, path)
        shown = json.dumps(sample, ensure_ascii=False) if sample is not None else "null"
        if origin is tuple:
            most = _bound(meta, "max_length")
            (inner,) = typing.get_args(annotation)[:1]
            self.out.append(
                CatalogueField(
                    path, "list", f"list of {inner.__name__}", nullable, f"0..{most} items",
                    _short(shown), note,
                )
            )  # fmt: skip
            self.model(inner, f"{path}[].", example)
            return
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            self.out.append(
                CatalogueField(path, "object", annotation.__name__, nullable, "", "", note)
            )
            self.model(annotation, f"{path}.", example)
            return
        if origin is typing.Literal:
            values = ", ".join(str(v) for v in typing.get_args(annotation))
            self.out.append(
                CatalogueField(path, "literal", "literal", nullable, values, shown, note)
            )
            return
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            vocab = _snake(annotation.__name__)
            members = tuple(str(m.value) for m in annotation)
            self.vocabularies[vocab] = members
            self.out.append(
                CatalogueField(
                    path, "enum", f"enum {vocab}", nullable, _values(vocab, members), shown, note
                )
            )
            return
        kind, type_name, values = _scalar(annotation, meta)
        self.out.append(CatalogueField(path, kind, type_name, nullable, values, shown, note))


def _bound(meta: Sequence[Any], attr: str) -> Any:
    for item in meta:
        value = getattr(item, attr, None)
        if value is not None:
            return value
    return None


def _scalar(annotation: Any, meta: Sequence[Any]) -> tuple[str, str, str]:
    if annotation is bool:
        return "boolean", "boolean", "true, false"
    if annotation is int:
        lo, hi = _bound(meta, "ge"), _bound(meta, "le")
        return "integer", "integer", f"{lo}..{hi}"
    if annotation is dt.date:
        return "date", "date (UTC day)", "YYYY-MM-DD"
    if annotation is uuid.UUID or getattr(annotation, "__name__", "") == "UUID":
        return "uuid", "UUID version 4", "random, derived from nothing"
    if annotation is str:
        pattern = _bound(meta, "pattern")
        most = _bound(meta, "max_length")
        return "string", f"string, at most {most} characters", f"pattern {pattern}"
    name = getattr(annotation, "__name__", repr(annotation))
    return "object", name, ""


def _values(vocab: str, members: Sequence[str]) -> str:
    if len(members) <= _INLINE_VALUES:
        return ", ".join(members)
    return f"{len(members)} values of `{vocab}`"


def _short(text: str, most: int = 120) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _wire(vocabularies: dict[str, tuple[str, ...]]) -> list[DataFormat]:
    from client.sender import USER_AGENT
    from contract.schema import MAX_BATCH, FrictionSignal

    example = json.loads(_example_signal().model_dump_json())
    walker = _Walker(vocabularies)
    walker.model(FrictionSignal, "", example)
    signal = DataFormat(
        "wire.signal",
        "Friction signal, version 1",
        "the JSON body sent to POST /v1/signals (contract/schema/_models.py)",
        "One anonymous signal. Also the content of the outbox, the sent log and the database row.",
        tuple(walker.out),
    )
    batch = DataFormat(
        "wire.batch",
        "Signal batch",
        "the body of POST /v1/signals",
        "The envelope: nothing but the signals.",
        (
            CatalogueField(
                "signals", "list", "list of FrictionSignal", False, f"1..{MAX_BATCH} items",
                "[{…}]", "The signals of one delivery.",
            ),
        ),
    )  # fmt: skip
    http = DataFormat(
        "wire.http",
        "HTTP request of a delivery",
        "client/sender.py",
        "Fixed headers: no version, platform, locale or machine name travels in them.",
        (
            CatalogueField("user-agent", "literal", "literal", False, USER_AGENT, USER_AGENT),
            CatalogueField(
                "content-type", "literal", "literal", False, "application/json", "application/json"
            ),
        ),
    )
    return [signal, batch, http]


def _client_files() -> list[DataFormat]:
    from contract.privacy import DAILY_SIGNAL_LIMIT

    return [
        DataFormat(
            "client.settings",
            "settings.json",
            "LMCP_HOME/settings.json (client/consent.py)",
            "The user's choice. Missing or unreadable means OFF; the environment only restricts.",
            (
                CatalogueField(
                    "anonymous_signals", "enum", "enum", False,
                    "off, local, on (true/false from older releases)", '"on"',
                    "off: nothing; local: kept for preview/log, never uploaded; on: uploaded.",
                ),
                CatalogueField(
                    "daily_signal_limit", "integer", "integer", True,
                    f"0..{DAILY_SIGNAL_LIMIT}", str(DAILY_SIGNAL_LIMIT),
                    "Lowers the daily contribution bound; never raises it.",
                ),
            ),
        ),
        DataFormat(
            "client.outbox",
            "outbox.json",
            "LMCP_HOME/outbox.json (client/outbox.py)",
            "Signals not delivered yet, one FrictionSignal per line (JSON lines), appended and "
            "fsynced; at most 1,000, re-validated on load; a torn last line is ignored; off "
            "purges it.",
            (CatalogueField("signal", "object", "FrictionSignal", False, "", "{…}"),),
        ),
        DataFormat(
            "client.sent_log",
            "sent.jsonl",
            "LMCP_HOME/sent.jsonl (client/sentlog.py)",
            "What was sent (or, in local mode, kept) on this machine, one JSON line each, "
            "at most 200.",
            (
                CatalogueField(
                    "status", "enum", "enum", False, "delivered, rejected, local", '"delivered"'
                ),
                CatalogueField("signal", "object", "FrictionSignal", False, "", "{…}"),
            ),
        ),
        DataFormat(
            "client.last_failure",
            "last_failure.json",
            "LMCP_HOME/last_failure.json (client/friction.py)",
            "The latest failure's shapes, for `lmcp signals preview`; never written when off.",
            (
                CatalogueField("tool", "enum", "enum tool_name", False, "24 values of `tool_name`",
                               '"read_note"'),
                CatalogueField("error_class", "enum", "enum error_class", False,
                               "15 values of `error_class`", '"not_found"'),
                CatalogueField("args", "list", "list of ArgShape", False, "0..32 items", "[{…}]"),
                CatalogueField("ring", "list", "list of RingEntry", False, "0..10 items", "[{…}]"),
                CatalogueField("app", "object", "AppState", False, "", "{…}"),
            ),
        ),
        DataFormat(
            "client.contributions",
            "contributions.json",
            "LMCP_HOME/contributions.json (client/contributions.py)",
            "The daily contribution bound: today's UTC date and the keys used, never a value.",
            (
                CatalogueField("day", "date", "date", False, "a UTC day", '"2026-11-30"'),
                CatalogueField("keys", "list", "list of string", False,
                               f"0..{DAILY_SIGNAL_LIMIT} items of tool/error_class/friction_type",
                               '["read_note/not_found/cannot_complete"]'),
                CatalogueField("full", "boolean", "boolean", True, "true",
                               "true", "Set when the file was unreadable: the day is spent."),
            ),
        ),
    ]  # fmt: skip


# -- storage and exports -----------------------------------------------------------------------

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


_DUCK_RANGES = {
    "UTINYINT": "0..255",
    "USMALLINT": "0..65535",
    "UINTEGER": "0..4294967295",
    "TINYINT": "-128..127",
    "SMALLINT": "-32768..32767",
    "BOOLEAN": "true, false",
    "DATE": "YYYY-MM-DD (a UTC day)",
    "UUID": "random UUID4",
}


def _sample(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list | dict):
        return _short(json.dumps(value, default=str, ensure_ascii=False))
    return _short(json.dumps(str(value), ensure_ascii=False))


def _example_rows(con: Any) -> dict[str, dict[str, Any]]:
    """The example signal written by the collector's own write path, as each table/export row."""
    import datetime as _dt

    from collector.store import flush_rows

    flush_rows(con, [[_example_signal()]], _dt.date(2026, 11, 30))
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
    "release_days": {
        "cube": "friction",
        "day": "2026-11-29",
        "params": "epsilon=0.4 delta=3.84715e-07 scale=25 cap=10 l0=10 l1=10 linf=1",
        "threshold": 410,
        "cells": 37,
    },
    "release_cells": {
        "cube": "friction",
        "day": "2026-11-29",
        "key": "read_note|not_found|cannot_complete|macos",
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
_COLUMN_VALUES = {
    ("schema_migrations", "name"): "a file name of collector/migrations/",
    ("schema_migrations", "sha256"): "64 hex digits",
    ("release_days", "cube"): "friction, versions, context, shapes, ring",
    ("release_days", "params"): "the calibration used (epsilon, delta, scale, cap, l0, l1, linf)",
    ("release_days", "threshold"): "the release threshold tau (noisy counts below are dropped)",
    ("release_days", "cells"): "how many cells the day released",
    ("release_cells", "cube"): "friction, versions, context, shapes, ring",
    ("release_cells", "key"): "the cell's enum labels, catalogue names or version, joined by |",
    ("release_cells", "n"): "a noisy count at or above the threshold",
    ("steward_audit", "label"): "a steward token's configured label (never the token)",
    ("steward_audit", "route"): "a steward route template",
    ("steward_audit", "filter"): "the validated parameters of the read",
}


def _named_enums(data_type: str, inline: dict[str, str]) -> str:
    for literal, name in inline.items():
        data_type = data_type.replace(literal, name)
    return data_type


def _storage(vocabularies: dict[str, tuple[str, ...]]) -> tuple[list[DataFormat], Any]:
    """The tables of both stores: the collector's signals file and the skills service's file
    (two files, never one). Returns the formats and the (migrated) signals connection."""
    import duckdb

    from cloudskills.store import MIGRATIONS_DIR as SKILLS_MIGRATIONS
    from collector.db import migrate
    from service.db import apply_migrations

    con = duckdb.connect(":memory:")
    migrate(con)
    formats = _tables(
        con, vocabularies, _example_rows(con),
        "the collector's database file (collector/migrations/*.sql)",
    )  # fmt: skip
    skills = duckdb.connect(":memory:")
    try:
        apply_migrations(skills, SKILLS_MIGRATIONS)
        formats += _tables(
            skills, vocabularies, {},
            "the Cloud Skills service's own database file (cloudskills/migrations/*.sql)",
            skip=frozenset({"schema_migrations"}),  # the same ledger as the collector's
        )  # fmt: skip
    finally:
        skills.close()
    return sorted(formats, key=lambda fmt: fmt.key), con


def _tables(
    con: Any,
    vocabularies: dict[str, tuple[str, ...]],
    examples: dict[str, dict[str, Any]],
    source: str,
    *,
    skip: frozenset[str] = frozenset(),
) -> list[DataFormat]:
    """One format per table of ``con`` (its columns, types, vocabularies and CHECKs)."""
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
        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
    ).fetchall()
    tables: dict[str, list[CatalogueField]] = {}
    for table, column, data_type, is_nullable in rows:
        if str(table) in skip:
            continue
        named = _named_enums(str(data_type), inline)
        kind = _duck_kind(str(data_type))
        values = _COLUMN_VALUES.get((str(table), str(column))) or _DUCK_RANGES.get(named, "")
        if kind == "enum" and named in vocabularies:
            values = _values(named, vocabularies[named])
        constraint = "; ".join(checks.get((str(table), str(column)), []))
        row = examples.get(str(table))
        tables.setdefault(str(table), []).append(
            CatalogueField(
                str(column), kind, named, is_nullable == "YES", values or constraint,
                _sample(row[str(column)]) if row else "",
                "CHECK " + constraint if constraint and values else "",
            )
        )  # fmt: skip
    return [
        DataFormat(
            f"duckdb.{table}",
            f"DuckDB table `{table}`",
            source,
            _TABLE_SUMMARIES.get(table, ""),
            tuple(fields),
        )  # fmt: skip
        for table, fields in sorted(tables.items())
    ]


_TABLE_SUMMARIES = {
    "signals": "One row per accepted signal; deleted after the retention window.",
    "schema_migrations": "Which migration files were applied (name, digest, UTC day).",
    "release_days": "Which (cube, closed day) releases are stored, with their calibration.",
    "release_cells": "Differentially private released cells: all the team role ever sees.",
    "reordered_days": "Closed days rewritten in signal_id order (so no arrival order).",
    "steward_audit": "Every steward read of raw rows or exact counts: who (label), day, what.",
    "skills": "Cloud Skills: a skill's scope and slug (authenticated content, not signals).",
    "skill_revisions": "Cloud Skills: immutable revisions written by an authenticated author.",
    "skill_components": "Cloud Skills: the files of a revision.",
    "skill_revision_state": "Cloud Skills: each revision's life-cycle status.",
    "skill_revision_events": "Cloud Skills: the append-only history of status changes.",
}


def _arrow_kind(arrow_type: Any) -> str:
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        return "enum"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return "list"
    if pa.types.is_struct(arrow_type):
        return "object"
    if pa.types.is_boolean(arrow_type):
        return "boolean"
    if pa.types.is_date(arrow_type):
        return "date"
    if pa.types.is_timestamp(arrow_type):
        return "timestamp"
    if pa.types.is_integer(arrow_type):
        return "integer"
    if pa.types.is_floating(arrow_type):
        return "float"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    return "other"


def _arrow_name(arrow_type: Any) -> str:
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        return f"dictionary<{arrow_type.value_type}> (enum)"
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return f"list<{_arrow_name(arrow_type.value_type)}>"
    if pa.types.is_struct(arrow_type):
        return (
            "struct<"
            + ", ".join(arrow_type.field(i).name for i in range(arrow_type.num_fields))
            + ">"
        )
    return str(arrow_type)


def _exports(con: Any, stored: Sequence[DataFormat]) -> list[DataFormat]:
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    from collector.db import SQL_DIR
    from service.sql import load_sql

    columns = {
        f.name: f.values for fmt in stored if fmt.key == "duckdb.signals" for f in fmt.fields
    }
    out: list[DataFormat] = []
    table = con.sql(load_sql(SQL_DIR, "export_parquet"), params=[None]).to_arrow_table()
    buf = io.BytesIO()
    pq.write_table(table, buf)
    buf.seek(0)
    schema = pq.read_schema(buf)
    buf.seek(0)
    rows = pq.read_table(buf).to_pylist()
    first = rows[0] if rows else None
    out.append(
        DataFormat(
            "export.parquet",
            "Export: Parquet",
            "GET /v1/signals/export?format=parquet (collector/sql/export_parquet.sql)",
            "The signals table with typed, nested columns.",
            tuple(
                CatalogueField(
                    f.name,
                    _arrow_kind(f.type),
                    _arrow_name(f.type),
                    f.nullable,
                    columns.get(f.name, ""),
                    _sample(first[f.name]) if first else "",
                )
                for f in schema
            ),
        )
    )
    table = con.sql(load_sql(SQL_DIR, "export_csv"), params=[None]).to_arrow_table()
    sink = io.BytesIO()
    pa_csv.write_csv(table, sink)
    import csv

    parsed = list(csv.reader(io.StringIO(sink.getvalue().decode("utf-8"))))
    names = parsed[0]
    line = dict(zip(names, parsed[1], strict=True)) if len(parsed) > 1 else {}
    out.append(
        DataFormat(
            "export.csv",
            "Export: CSV",
            "GET /v1/signals/export?format=csv (collector/sql/export_csv.sql)",
            "The same rows as flat text; `args` and `ring` are JSON arrays.",
            tuple(
                CatalogueField(
                    name,
                    "list"
                    if name in ("args", "ring")
                    else _arrow_kind(table.schema.field(name).type),
                    _arrow_name(table.schema.field(name).type),
                    table.schema.field(name).nullable,
                    "JSON array" if name in ("args", "ring") else columns.get(name, ""),
                    _short(line.get(name, "")) or "(empty: null)",
                )
                for name in names
            ),
        )
    )
    return out


# -- public ------------------------------------------------------------------------------------


def generate(*, storage: bool = True) -> DataCatalogue:
    """Build the catalogue from the code (and, when available, the collector's schema)."""
    vocabularies: dict[str, tuple[str, ...]] = {}
    formats = _wire(vocabularies) + _client_files()
    omitted: tuple[str, ...] = ()
    if storage:
        try:
            stored, con = _storage(vocabularies)
        except ImportError:
            omitted = ("storage and exports (install the `collector` extra)",)
        else:
            try:
                formats += stored + _exports(con, stored)
            finally:
                con.close()
    return DataCatalogue(tuple(formats), dict(sorted(vocabularies.items())), omitted)


def render_json(catalogue: DataCatalogue) -> str:
    doc = {
        "formats": [
            {**{k: v for k, v in asdict(fmt).items() if k != "fields"},
             "fields": [asdict(f) for f in fmt.fields]}
            for fmt in catalogue.formats
        ],
        "vocabularies": {k: list(v) for k, v in catalogue.vocabularies.items()},
        "omitted": list(catalogue.omitted),
        "privacy": privacy_json(privacy_parameters()),
    }  # fmt: skip
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") if text else ""


def render_markdown(catalogue: DataCatalogue) -> str:
    """The catalogue as one Markdown page (``docs/data-catalogue.md``)."""
    lines = [
        "# Data catalogue",
        "",
        "GENERATED by `lmcp signals catalogue --markdown` from the code (lmcp/datacatalogue.py)"
        " -- do not edit; a test fails when this page and the code differ.",
        "",
        "Every field of every format the friction pipeline keeps or sends: its type, its possible "
        "values and an example. Each field is also classified in the reviewed catalogue "
        "(`privacy_tests/data_catalogue.json`); the privacy audit fails on a field that is not. "
        "What each signal field is for: [signal-schema.md](signal-schema.md); the promises: "
        "[privacy.md](privacy.md).",
        "",
    ]
    for omitted in catalogue.omitted:
        lines += [f"> Omitted here: {omitted}.", ""]
    for fmt in catalogue.formats:
        lines += [f"## {fmt.title}", "", f"`{fmt.key}` — {fmt.where}.", ""]
        if fmt.summary:
            lines += [fmt.summary, ""]
        lines += [
            "| field | type | null | values | example | note |",
            "|---|---|---|---|---|---|",
        ]
        for f in fmt.fields:
            lines.append(
                f"| `{f.name}` | {_cell(f.type)} | {'yes' if f.nullable else 'no'} | "
                f"{_cell(f.values)} | {_cell(f.example)} | {_cell(f.note)} |"
            )
        lines.append("")
    lines += privacy_markdown(privacy_parameters())
    lines += ["## Vocabularies", ""]
    for name, members in catalogue.vocabularies.items():
        lines += [f"**{name}** ({len(members)}): " + ", ".join(f"`{m}`" for m in members), ""]
    return "\n".join(lines).rstrip("\n") + "\n"
