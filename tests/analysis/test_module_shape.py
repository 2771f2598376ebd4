"""The analysis package's shape: no import circle among its modules (function-level imports
included), one module defining the row types, and a typed API without casts."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
from pathlib import Path

import pytest

from analysis._filters import Filters, Period
from analysis._questions import Answer
from analysis._registry import QUESTIONS, Question
from analysis._rows import TopRow, TrendRow

PACKAGE = Path(__file__).resolve().parents[2] / "analysis"


def _imports(path: Path) -> set[str]:
    """The ``analysis`` modules a file imports, anywhere in it (lazy imports too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        out |= {n for n in names if n == "analysis" or n.startswith("analysis.")}
    return out


def _graph() -> dict[str, set[str]]:
    mods = {f"analysis.{p.stem}": p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return {name: _imports(path) & set(mods) for name, path in mods.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def test_the_cycle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_circle_in_analysis() -> None:
    assert _cycle(_graph()) is None


def test_the_row_types_are_defined_in_one_module() -> None:
    defined: dict[str, list[str]] = {}
    for path in PACKAGE.glob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("Row"):
                defined.setdefault(node.name, []).append(path.stem)
    row_types = {spec.row_type.__name__ for spec in QUESTIONS.values()}
    assert row_types <= set(defined)
    assert all(where == ["_rows"] for where in defined.values()), defined
    assert all(spec.row_type.__module__ == "analysis._rows" for spec in QUESTIONS.values())


def test_the_typed_api_has_no_cast() -> None:
    text = (PACKAGE / "_api.py").read_text(encoding="utf-8")
    assert "cast(" not in text and "import cast" not in text


def _answer(*rows: TopRow | TrendRow) -> Answer[TopRow | TrendRow]:
    period = Period(dt.date(2026, 3, 2), dt.date(2026, 3, 29))
    return Answer(Question.top, period, None, Filters(), rows, source="released")


def test_narrow_keeps_the_answer_and_refuses_another_row_type() -> None:
    top = TopRow("read_note", "not_found", "cannot_complete", 10, 2, *(None,) * 6)
    answer = _answer(top)
    narrowed = answer.narrow(TopRow)
    assert dataclasses.astuple(narrowed) == dataclasses.astuple(answer)
    assert narrowed.rows[0].friction_type == "cannot_complete"
    trend = TrendRow(dt.date(2026, 3, 2), "all", 3, 1, None, None, False)
    with pytest.raises(TypeError):
        _answer(top, trend).narrow(TopRow)
