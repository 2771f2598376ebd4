"""The figures a published page or download shows, read as a reader reads them: for the tests
that prove an exact count is nowhere (the public site, the dashboard's pages and downloads).

A figure is a number as written: ``1,317`` is 1317, while ``0.01317``, ``13170``, ``id="q-1317"``
or a chart coordinate ``x="1317"`` are not. Searching the text for the digits instead finds
them by chance in any other number, id or coordinate.

- ``numbers(text)``: every number written in ``text``;
- ``figures(kind, body)``: the numbers a file shows, by kind: an HTML page's text and readable
  attributes (not its styles, ids and coordinates), a CSV's cells, a JSON document's numbers and
  strings.
"""

from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser

__all__ = ["figures", "kind_of", "numbers"]

#: A run of digits a reader takes for one number: ``1,317``, ``1317``, ``13.17``, ``2026``.
_NUMBER = re.compile(r"(?<![\w.])\d[\d,.]*\d(?!\w)|(?<![\w.,])\d(?![\w,.]?\d)")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
#: The attributes a reader (or a screen reader) is given as text; the others place things.
_READ_ATTRIBUTES = frozenset({"aria-label", "aria-description", "title", "alt", "summary"})
_HIDDEN = frozenset({"style", "script"})


def numbers(text: str) -> set[float]:
    """Every number written in ``text`` as a reader would read it (``1,317`` is 1317;
    ``0.01317`` and ``13170`` are not; ``1.2.3`` is 1, 2 and 3)."""
    out: set[float] = set()
    for token in _NUMBER.findall(text):
        token = token.rstrip(".,")
        if _THOUSANDS.fullmatch(token):
            out.add(float(token.replace(",", "")))
            continue
        for part in token.split(","):
            try:
                out.add(float(part))
            except ValueError:  # 1.2.3: each its own number
                out.update(float(p) for p in part.split(".") if p)
    return out


class _Shown(HTMLParser):
    """The text of a page as a reader meets it: its text nodes (tables, chart labels) and its
    readable attributes; not its styles, nor the coordinates and ids that lay it out."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            self._hidden += 1
        self.parts += [v for k, v in attrs if k in _READ_ATTRIBUTES and v is not None]

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def _json_numbers(value: object) -> set[float]:
    if isinstance(value, bool) or value is None:
        return set()
    if isinstance(value, int | float):
        return {float(value)}
    if isinstance(value, str):
        return numbers(value)
    assert isinstance(value, dict | list), type(value)
    items = value.values() if isinstance(value, dict) else value
    return set().union(*map(_json_numbers, items))


def kind_of(name_or_media_type: str) -> str:
    """``html``, ``csv`` or ``json`` for a file name or a response's media type."""
    lowered = name_or_media_type.lower().split(";")[0].strip()
    for kind in ("html", "csv", "json"):
        if lowered.endswith((f".{kind}", f"/{kind}", f"+{kind}")):
            return kind
    raise AssertionError(f"a file of a kind the figures are read from: {name_or_media_type}")


def figures(kind: str, body: str) -> set[float]:
    """The numbers a file of ``kind`` (``kind_of``) shows."""
    if kind == "html":
        page = _Shown()
        page.feed(body)
        page.close()
        return set().union(*map(numbers, page.parts))
    if kind == "csv":
        return set().union(
            *(numbers(cell) for row in csv.reader(body.splitlines()) for cell in row)
        )
    assert kind == "json", kind
    return _json_numbers(json.loads(body))
