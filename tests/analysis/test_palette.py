"""One palette: a value's colour does not depend on which other values a chart shows."""

from __future__ import annotations

import datetime as dt

from analysis._charts import chart_spec
from analysis._filters import Filters, Period
from analysis._palette import PALETTE, SPIKE
from analysis._questions import Answer, Question
from analysis._rows import Row, TopRow, TrendRow
from contract.schema import ArgType, FrictionType, Platform

_DAY = dt.date(2026, 4, 1)
_PERIOD = Period(_DAY, _DAY + dt.timedelta(days=3))


def _answer(question: Question, rows: list[Row]) -> Answer[Row]:
    return Answer(question, _PERIOD, None, Filters(), tuple(rows), source="released")


def _colours(scale: dict[str, list[str]]) -> dict[str, str]:
    return dict(zip(scale["domain"], scale["range"], strict=True))


def test_every_value_of_a_vocabulary_has_a_colour() -> None:
    assert {f.value for f in FrictionType} | {"all"} == set(PALETTE["friction_type"])
    assert {p.value for p in Platform} == set(PALETTE["platform"])
    assert {a.value for a in ArgType} == set(PALETTE["arg_type"])
    values = [v for category in PALETTE.values() for v in category]
    assert len(values) == len(set(values)), "a legend label names one colour"


def test_a_friction_type_keeps_its_colour_whatever_else_is_shown() -> None:
    one = [TopRow("read_note", "not_found", "other", 10, 3, *(None,) * 6)]
    every = [TopRow("read_note", "not_found", f.value, 10, 3, *(None,) * 6) for f in FrictionType]
    colour_of = []
    for rows in (one, every):
        spec = chart_spec(_answer(Question.top, list(rows)))
        assert spec is not None
        colour_of.append(_colours(spec["encoding"]["color"]["scale"])["other"])
    trend = [TrendRow(_DAY, s, 5, 2, None, None, s == "all") for s in ("all", "other")]
    spec = chart_spec(_answer(Question.trends, list(trend)))
    assert spec is not None
    colour_of.append(_colours(spec["layer"][0]["encoding"]["color"]["scale"])["other"])
    assert colour_of == [PALETTE["friction_type"]["other"]] * 3
    # Spike markers: their own colour, and a legend (a shape scale over a field).
    spike = spec["layer"][1]
    assert spike["mark"]["color"] == SPIKE not in PALETTE["friction_type"].values()
    assert spike["encoding"]["shape"]["field"] == "marker"
