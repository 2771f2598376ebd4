"""An answer as CSV: the one definition, for the CLI (``lmcp analysis ... --format csv``) and
the dashboard's exports (``analysis._export``).

Light on purpose: the CLI's CSV path must load no chart engine and no web framework.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Sequence
from dataclasses import fields
from typing import TextIO

from analysis._questions import QUESTIONS, Answer
from analysis._rows import PanelRow, Row

__all__ = ["csv_cell", "write_csv", "write_rows_csv"]

#: A spreadsheet runs a text cell starting with one of these as a formula (OWASP's list).
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> str:
    """One value as a CSV cell, for machines: numbers raw, ``true``/``false``, ISO days, empty
    for None. Text a spreadsheet would run as a formula gets a leading ``'``: values are enums,
    but a downloaded file must never run one. Never prefixed: a number (a negative change must
    stay a number) and a lone character (no formula; the shapes' size of a sizeless type is
    ``-``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value)
    return "'" + text if len(text) > 1 and text.startswith(_FORMULA) else text


def write_csv(
    answer: Answer[Row], out: TextIO, rows: Sequence[Row] | None = None, *, newline: str = "\n"
) -> None:
    """An answer as CSV: a header of every field of its rows (``n`` and its ``moe``, a share
    and its ``share_moe`` as separate columns), then ``rows`` (by default the answer's). A
    field holding a character of ``newline`` is quoted (files use RFC 4180's CRLF)."""
    names = [f.name for f in fields(QUESTIONS[answer.question].row_type)]
    write_rows_csv(names, answer.rows if rows is None else rows, out, newline=newline)


def write_rows_csv(
    names: Sequence[str], rows: Sequence[PanelRow], out: TextIO, *, newline: str = "\n"
) -> None:
    """Rows as CSV: a header of ``names``, then each row's fields of those names."""
    writer = csv.writer(out, lineterminator=newline)
    writer.writerow(names)
    for row in rows:
        writer.writerow(csv_cell(getattr(row, n)) for n in names)
