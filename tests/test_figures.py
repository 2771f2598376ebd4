"""``tests/_figures.py`` reads what a reader reads: a count in a table cell, a chart label, a
readable attribute or a data file is a figure; a coordinate, an id, a style or a digit run
inside another number is not (the exact-count checks would otherwise fail by chance)."""

from __future__ import annotations

import pytest

from tests._figures import figures, kind_of

SHOWN = [
    ("index.html", "<table><tr><td>1,317 \u00b1 60</td></tr></table>"),
    ("index.html", "<svg><g><text x='4'>1317</text></g></svg>"),
    ("index.html", '<svg><g aria-label="read_note: 1317 signals"></g></svg>'),
    ("index.html", "<p>released 1,317.</p>"),
    ("index.html", "<p>change \u22121,317 (\u221212.5 %)</p>"),
    ("top.csv", "tool,n,moe\r\nread_note,1317,60\r\n"),
    ("top.json", '{"rows": [{"n": 1317}]}'),
    ("top.json", '{"rows": [{"shown": "1,317 \u00b1 60"}]}'),
    ("text/html; charset=utf-8", "<td>1317</td>"),
    ("application/problem+json", '{"detail": "1317 signals"}'),
]
HIDDEN = [
    ("index.html", '<svg><path d="M1317,2L13,170"/><rect x="1317" y="0.1317"/></svg>'),
    ("index.html", '<p id="q-1317" class="c1317">13170 and 0.1317, v1.317.2</p>'),
    ("index.html", "<style>.chart { width: 1317px; }</style><p>2026-03-13</p>"),
    ("index.html", '<a href="/x?n=1317">link</a>'),
    ("top.json", '{"scale": 13.17, "id": "a1317", "n": 13170}'),
    ("top.csv", "tool,n\r\nread_note,131.7\r\n"),
]


@pytest.mark.parametrize(("name", "body"), SHOWN)
def test_a_shown_number_is_a_figure(name: str, body: str) -> None:
    assert 1317.0 in figures(kind_of(name), body)


@pytest.mark.parametrize(("name", "body"), HIDDEN)
def test_digits_inside_other_things_are_no_figure(name: str, body: str) -> None:
    assert 1317.0 not in figures(kind_of(name), body)


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(AssertionError):
        kind_of("image/png")
