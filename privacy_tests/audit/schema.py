"""Structural audits: the wire model, the reviewed data catalogue, and DuckDB storage.

- ``audit_model`` walks a pydantic model and flags any field that could hold a free value: a
  free ``str`` (no pattern and bound), an unbounded ``int``, a ``dict``/``bytes``/``Any``, a
  ``datetime``, an unbounded sequence, a model that allows extra fields or is not frozen.
- ``audit_catalogue`` compares the catalogue generated from the code with the reviewed one
  (``privacy_tests/data_catalogue.json``), like glean_parser's lint: a field the reviewer has
  not classified, a reviewed field that no longer exists, a class the field's type contradicts,
  or a class not allowed in its format's category, each is a problem.
- ``audit_storage`` checks every column of every DuckDB table against the storage rules: in the
  signal tables no VARCHAR without a CHECK, no time finer than a day, no column whose name
  suggests an address, a user agent or a person; in every table no address or user agent.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import re
import types
import typing
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel

__all__ = [
    "ALLOWED_CLASSES",
    "CLASS_KINDS",
    "REVIEWED_CATALOGUE",
    "audit_catalogue",
    "audit_model",
    "audit_storage",
    "load_reviewed",
]

REVIEWED_CATALOGUE = Path(__file__).resolve().parent.parent / "data_catalogue.json"

# -- the wire model ------------------------------------------------------------------------------


def _leaf_problems(where: str, annotation: Any, metadata: list[Any]) -> list[str]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        flat: list[Any] = []
        for item in extra:  # a pydantic FieldInfo carries its constraints in .metadata
            flat += [item, *getattr(item, "metadata", [])]
        return _leaf_problems(where, base, metadata + flat)
    if origin in (typing.Union, types.UnionType):
        problems = []
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                problems += _leaf_problems(where, arg, metadata)
        return problems
    if origin in (tuple, list, frozenset, set):
        args = typing.get_args(annotation)
        bounded = any(isinstance(m, annotated_types.MaxLen) for m in metadata)
        problems = [] if bounded else [f"{where}: unbounded sequence"]
        return problems + _leaf_problems(f"{where}[]", args[0], [])
    if origin is typing.Literal:
        return []
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return audit_model(annotation, where)
        if issubclass(annotation, enum.Enum) or annotation in (bool, dt.date, uuid.UUID):
            return []
        if annotation is int:
            has_lo = any(isinstance(m, annotated_types.Ge | annotated_types.Gt) for m in metadata)
            has_hi = any(isinstance(m, annotated_types.Le | annotated_types.Lt) for m in metadata)
            return [] if has_lo and has_hi else [f"{where}: unbounded int"]
        if annotation is str:
            patterned = any(getattr(m, "pattern", None) for m in metadata)
            bounded = any(isinstance(m, annotated_types.MaxLen) for m in metadata)
            return [] if patterned and bounded else [f"{where}: free str"]
        if issubclass(annotation, dt.datetime | dt.time | dt.timedelta):
            return [f"{where}: time finer than a day"]
    return [f"{where}: {annotation!r} is not an allowed field type"]


def audit_model(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Problems of ``model``: each names the field path and the rule it breaks."""
    problems = []
    if model.model_config.get("extra") != "forbid":
        problems.append(f"{prefix or model.__name__}: extra fields allowed")
    if not model.model_config.get("frozen"):
        problems.append(f"{prefix or model.__name__}: not frozen")
    for name, field in model.model_fields.items():
        where = f"{prefix}.{name}" if prefix else name
        problems += _leaf_problems(where, field.annotation, list(field.metadata))
    return problems


# -- the reviewed data catalogue -----------------------------------------------------------------

#: Which structural kinds (lmcp.datacatalogue.CatalogueField.kind) each class may have.
CLASS_KINDS: dict[str, frozenset[str]] = {
    "constant": frozenset({"literal"}),
    "enum": frozenset({"enum", "string"}),  # string: an enum rendered as CSV text
    "catalogue_name": frozenset({"enum", "string"}),
    "boolean": frozenset({"boolean"}),
    "bounded_int": frozenset({"integer"}),
    "day": frozenset({"date"}),
    "random_uuid": frozenset({"uuid", "string"}),
    "version": frozenset({"string"}),
    "container": frozenset({"list", "object", "string"}),  # string: a CSV JSON array
    "system_text": frozenset({"string"}),
    "constrained_text": frozenset({"string"}),
    "generated_id": frozenset({"string", "uuid"}),
    "content_hash": frozenset({"string"}),
    "authored_text": frozenset({"string"}),
    "principal": frozenset({"string"}),
    "timestamp": frozenset({"timestamp"}),
    # A release's noise scale: derived from the published parameters, never from a signal.
    "noise_scale": frozenset({"float"}),
}

_SIGNAL_CLASSES = frozenset(
    {
        "constant",
        "enum",
        "catalogue_name",
        "boolean",
        "bounded_int",
        "day",
        "random_uuid",
        "version",
        "container",
    }
)

#: Which classes each category of format may hold.
ALLOWED_CLASSES: dict[str, frozenset[str]] = {
    "anonymous_signal": _SIGNAL_CLASSES,
    "client_local": _SIGNAL_CLASSES,
    "operational": _SIGNAL_CLASSES | {"system_text", "noise_scale"},
    "authored_content": frozenset(CLASS_KINDS),
    # delta-rs's log of each lake table: commit and file times to the millisecond, random ids.
    "lake_log": _SIGNAL_CLASSES | {"system_text", "timestamp", "generated_id", "noise_scale"},
}
#: Categories whose field names are another format's vocabulary (Skills' authors and times,
#: the Delta protocol's ``path`` and ``timestamp``): the person/time name rule does not apply;
#: their classes do.
_FOREIGN_NAMES = frozenset({"authored_content", "lake_log"})

#: Column or field names that would hold an address, a user agent or a person: never allowed in
#: signal formats, and the first two never anywhere.
_NEVER_ANYWHERE = re.compile(r"(^|_)(ip|ip_?addr|address|remote_addr|user_?agent|ua)($|_)", re.I)
_NOT_IN_SIGNALS = re.compile(
    r"(^|_)(host|hostname|email|user|username|account|path|locale|lang|tz|timezone|"
    r"machine|device|install(ation)?_id|session|ts|time|timestamp|hour|minute)($|_)",
    re.I,
)


def load_reviewed(path: Path = REVIEWED_CATALOGUE) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def audit_catalogue(
    generated: Iterable[tuple[str, str, str, str]], reviewed: Mapping[str, Any]
) -> list[str]:
    """Problems between ``generated`` (format, field, kind, values) and the reviewed catalogue."""
    problems: list[str] = []
    formats: Mapping[str, Any] = reviewed["formats"]
    seen: set[tuple[str, str]] = set()
    for fmt, name, kind, values in generated:
        seen.add((fmt, name))
        spec = formats.get(fmt)
        leaf = name.rsplit(".", 1)[-1].removesuffix("[]")
        if _NEVER_ANYWHERE.search(leaf):
            problems.append(f"{fmt}.{name}: names an address or a user agent")
        category = spec.get("category") if spec is not None else None
        if category not in _FOREIGN_NAMES and _NOT_IN_SIGNALS.search(leaf):
            problems.append(f"{fmt}.{name}: names a person, machine, place or fine time")
        if spec is None:
            problems.append(f"{fmt}: a format the reviewed data catalogue does not list")
            continue
        entry = spec["fields"].get(name)
        if entry is None:
            problems.append(f"{fmt}.{name}: a new field; classify it in data_catalogue.json")
            continue
        klass = entry.get("class")
        if klass not in CLASS_KINDS:
            problems.append(f"{fmt}.{name}: unknown class {klass!r}")
            continue
        if kind not in CLASS_KINDS[klass]:
            problems.append(f"{fmt}.{name}: reviewed as {klass} but its type is {kind}")
        if klass not in ALLOWED_CLASSES.get(str(category), frozenset()):
            problems.append(f"{fmt}.{name}: class {klass} is not allowed in {category} data")
        if not str(entry.get("why", "")).strip():
            problems.append(f"{fmt}.{name}: the reviewed catalogue gives no reason it exists")
        if klass == "bounded_int" and fmt.startswith("wire.") and "None" in values:
            problems.append(f"{fmt}.{name}: an integer without both bounds")
    for fmt, spec in formats.items():
        for name in spec["fields"]:
            if (fmt, name) not in seen:
                problems.append(f"{fmt}.{name}: reviewed, but the code no longer has it")
    return problems


# -- DuckDB storage ------------------------------------------------------------------------------

_FINE_TIME = re.compile(r"\b(TIMESTAMP|TIME|INTERVAL|DATETIME)\b", re.I)
_FREE_TYPES = re.compile(r"\b(VARCHAR|BLOB|JSON|BIT|MAP|UNION)\b", re.I)


def audit_storage(con: Any, reviewed: Mapping[str, Any]) -> list[str]:
    """Problems of every column of every table in the open DuckDB connection ``con``."""
    problems: list[str] = []
    checks: dict[tuple[str, str], list[str]] = {}
    for table, cols, expr in con.execute(
        "SELECT table_name, constraint_column_names, expression FROM duckdb_constraints() "
        "WHERE constraint_type = 'CHECK'"
    ).fetchall():
        for col in cols:
            checks.setdefault((str(table), str(col)), []).append(str(expr))
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position"
    ).fetchall()
    formats: Mapping[str, Any] = reviewed["formats"]
    for table, column, data_type in rows:
        where = f"duckdb.{table}.{column}"
        spec = formats.get(f"duckdb.{table}")
        if spec is None:
            problems.append(f"duckdb.{table}: a table the reviewed data catalogue does not list")
            continue
        if _NEVER_ANYWHERE.search(str(column)):
            problems.append(f"{where}: names an address or a user agent")
        if spec["category"] == "authored_content":
            continue  # reviewed field by field by audit_catalogue
        # Enum labels are quoted inside ENUM(...): look at the type without them.
        bare = re.sub(r"'(?:[^']|'')*'", "''", str(data_type))
        if _FINE_TIME.search(bare):
            problems.append(f"{where}: {data_type} is finer than a day")
        if _FREE_TYPES.search(bare) and spec["category"] != "operational":
            if not checks.get((str(table), str(column))):
                problems.append(f"{where}: {data_type} without a CHECK can hold free text")
        if spec["category"] == "operational":
            entry = spec["fields"].get(column, {})
            if _FREE_TYPES.search(bare) and entry.get("class") != "system_text":
                problems.append(f"{where}: free text in an operational table")
        if _NOT_IN_SIGNALS.search(str(column)):
            problems.append(f"{where}: names a person, machine, place or fine time")
    return problems
