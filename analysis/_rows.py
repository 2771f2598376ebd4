"""Rows in and out: a query's values or a JSON object to a question's row type, and back.

The row types are defined with their questions, in ``analysis._registry``; they are re-exported
here for the modules that only handle rows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from analysis._registry import (
    AppRow,
    AttemptRow,
    IntentRow,
    PlatformRow,
    R,
    RegressionRow,
    RingRow,
    Row,
    ShapeRow,
    TopRow,
    TrendRow,
)

__all__ = [
    "AppRow",
    "AttemptRow",
    "IntentRow",
    "PlatformRow",
    "RegressionRow",
    "RingRow",
    "Row",
    "ShapeRow",
    "TopRow",
    "TrendRow",
    "row_from_json",
    "row_from_values",
    "row_to_json",
]

_CONVERTERS: dict[type, tuple[tuple[str, Any], ...]] = {}


def _converters(row_type: type) -> tuple[tuple[str, Any], ...]:
    known = _CONVERTERS.get(row_type)
    if known is not None:
        return known
    hints = typing.get_type_hints(row_type)
    out = []
    for f in dataclasses.fields(row_type):
        base = {t for t in typing.get_args(hints[f.name]) if t is not type(None)} or {hints[f.name]}
        out.append((f.name, next(iter(base))))
    _CONVERTERS[row_type] = tuple(out)
    return _CONVERTERS[row_type]


def _coerce(kind: Any, value: Any) -> Any:
    if value is None:
        return None
    if kind is dt.date:
        return value if isinstance(value, dt.date) else dt.date.fromisoformat(str(value))
    if kind is float:
        return float(value)
    if kind is int:
        return int(value)
    if kind is bool:
        return bool(value)
    return str(value)


def row_from_values(row_type: type[R], values: Sequence[Any]) -> R:
    """A row from a query's values, in column order."""
    names = _converters(row_type)
    return row_type(*(_coerce(kind, v) for (_, kind), v in zip(names, values, strict=True)))


def row_from_json(row_type: type[R], doc: Mapping[str, Any]) -> R:
    """A row from its JSON object (see ``row_to_json``)."""
    return row_type(**{name: _coerce(kind, doc.get(name)) for name, kind in _converters(row_type)})


def row_to_json(row: Row) -> dict[str, Any]:
    """A JSON object of a row: dates as ISO strings."""
    return {
        f.name: v.isoformat() if isinstance(v, dt.date) else v
        for f in dataclasses.fields(row)
        for v in (getattr(row, f.name),)
    }
