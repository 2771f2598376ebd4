"""One UTC day: ``contract.days.utc_today`` is the only place product code asks the clock for
today's date. Any other spelling of it (``datetime.now(UTC).date()``, ``datetime.utcnow()``,
``time.gmtime()``, ``date.today()``, a ``now`` kept in a name and its ``.date()`` taken later,
a day formatted straight from the clock) fails here, wherever it sits outside
``contract/days.py``: a second clock is a second answer to "which day is it?", and a signal
counted in one day's release by one and in another's by the other.

The check reads the code (``ast``); it does not count names, so a copy under another name is
caught as surely as one called ``utc_today``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests._packages import PACKAGES, REPO

#: Product code, and the scripts and development code that run it (benchmarks and tests may
#: freeze or fake the day as they need).
CHECKED = (*PACKAGES, "scripts", "lakedev")
THE_CLOCK = "contract/days.py"

#: A date format with a day in it and no time of day: a day read from the clock as text.
_DAY_FIELDS = ("%d", "%F", "%x", "%j")
_TIME_FIELDS = ("%H", "%M", "%S", "%T", "%X", "%f")


def _name(node: ast.expr) -> str:
    """The last name of ``a.b.c`` or ``c``; "" for anything else."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _is_utc(node: ast.expr) -> bool:
    """``UTC``, ``dt.UTC``, ``timezone.utc``, ``dt.timezone.utc``, ``ZoneInfo("UTC")``,
    ``timezone(timedelta(0))``."""
    if _name(node) in {"UTC", "utc"}:
        return True
    if not isinstance(node, ast.Call):
        return False
    constants = [a.value for a in node.args if isinstance(a, ast.Constant)]
    if _name(node.func) in {"ZoneInfo", "gettz"}:
        return bool(constants) and str(constants[0]) in {"UTC", "Etc/UTC", "GMT", "Etc/GMT"}
    if _name(node.func) == "timezone" and node.args:  # timezone(timedelta(0))
        offset = node.args[0]
        return isinstance(offset, ast.Call) and all(
            isinstance(a, ast.Constant) and a.value == 0 for a in offset.args
        )
    return False


def _reads_the_clock(node: ast.expr) -> bool:
    """An expression that reads the current time in UTC (or the machine's zone)."""
    if not isinstance(node, ast.Call):
        return False
    called = _name(node.func)
    if called in {"utcnow", "gmtime"}:
        return True
    if called in {"now", "today"} and isinstance(node.func, ast.Attribute):
        zones = [*node.args, *(k.value for k in node.keywords if k.arg == "tz")]
        return not zones or any(_is_utc(z) for z in zones)
    if called in {"fromtimestamp", "utcfromtimestamp"} and node.args:
        first = node.args[0]
        return isinstance(first, ast.Call) and _name(first.func) in {"time", "time_ns"}
    if called in {"astimezone", "replace"} and isinstance(node.func, ast.Attribute):
        return _reads_the_clock(node.func.value)
    return False


def _day_format(call: ast.Call) -> bool:
    fmt = call.args[0] if call.args else None
    if not (isinstance(fmt, ast.Constant) and isinstance(fmt.value, str)):
        return False
    text = fmt.value
    return any(f in text for f in _DAY_FIELDS) and not any(f in text for f in _TIME_FIELDS)


class _Finder(ast.NodeVisitor):
    """Every place that turns the clock into a day: one list of (line, what)."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []
        self._clocks: list[set[str]] = [set()]  # names holding a clock reading, per scope

    def _scoped(self, node: ast.AST) -> None:
        self._clocks.append(set())
        self.generic_visit(node)
        self._clocks.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _scoped

    def _holds_clock(self, node: ast.expr) -> bool:
        return _reads_the_clock(node) or (
            isinstance(node, ast.Name) and any(node.id in scope for scope in self._clocks)
        )

    def visit_Assign(self, node: ast.Assign) -> None:
        if _reads_the_clock(node.value):
            self._clocks[-1].update(t.id for t in node.targets if isinstance(t, ast.Name))
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None and _reads_the_clock(node.value):
            if isinstance(node.target, ast.Name):
                self._clocks[-1].add(node.target.id)
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if _reads_the_clock(node.value):
            self._clocks[-1].add(node.target.id)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        called = _name(func)
        if called in {"gmtime", "utcnow"}:
            self.found.append((node.lineno, f"{called}()"))
        elif called == "today" and _name(getattr(func, "value", func)) == "date":
            self.found.append((node.lineno, "date.today()"))
        elif isinstance(func, ast.Attribute) and self._holds_clock(func.value):
            if called == "date" or (called == "strftime" and _day_format(node)):
                self.found.append((node.lineno, f"{ast.unparse(node)}"))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        # ``now(UTC).isoformat()[:10]``: the day as text.
        value = node.value
        if (
            isinstance(value, ast.Call)
            and _name(value.func) == "isoformat"
            and isinstance(value.func, ast.Attribute)
            and self._holds_clock(value.func.value)
        ):
            self.found.append((node.lineno, ast.unparse(node)))
        self.generic_visit(node)


def inline_days(source: str) -> list[tuple[int, str]]:
    finder = _Finder()
    finder.visit(ast.parse(source))
    return sorted(finder.found)


def _checked_files() -> list[Path]:
    return sorted(
        path
        for folder in CHECKED
        for path in (REPO / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    )


def test_the_checked_tree_holds_code() -> None:
    assert len(_checked_files()) > 100  # a moved tree must not make the check vacuous


def test_the_clock_is_read_in_one_place() -> None:
    found = {
        f"{path.relative_to(REPO).as_posix()}:{line}": what
        for path in _checked_files()
        if path.relative_to(REPO).as_posix() != THE_CLOCK
        for line, what in inline_days(path.read_text(encoding="utf-8"))
    }
    assert found == {}, "use contract.days.utc_today"


def test_utc_today_is_where_the_clock_is_read() -> None:
    """The one place holds a reading the check recognises (else the check proves nothing)."""
    assert inline_days((REPO / THE_CLOCK).read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "spelling",
    [
        "day = datetime.now(UTC).date()",
        "day = dt.datetime.now(dt.UTC).date()",
        "day = dt.datetime.now(dt.timezone.utc).date()",
        "day = datetime.datetime.now(tz=datetime.timezone.utc).date()",
        "day = datetime.now(ZoneInfo('UTC')).date()",
        "day = datetime.now(timezone(timedelta(0))).date()",
        "day = datetime.now().date()",
        "day = datetime.utcnow().date()",
        "stamp = datetime.utcnow()",
        "day = time.gmtime()",
        "day = gmtime(time.time())[:3]",
        "day = dt.date.today()",
        "day = date.today()",
        "day = dt.datetime.fromtimestamp(time.time(), dt.UTC).date()",
        "day = datetime.now(UTC).astimezone(UTC).date()",
        "day = datetime.now(UTC).strftime('%Y-%m-%d')",
        "day = datetime.now(UTC).isoformat()[:10]",
        "now = dt.datetime.now(dt.UTC)\nday = now.date()",
        "def f():\n    now: dt.datetime = dt.datetime.now(dt.UTC)\n    return now.date()",
        "if (now := datetime.now(UTC)):\n    day = now.date()",
    ],
)
def test_the_check_sees_every_spelling(spelling: str) -> None:
    assert inline_days(spelling), spelling


@pytest.mark.parametrize(
    "innocent",
    [
        "day = utc_today()",
        "stamp = dt.datetime.now(dt.UTC).strftime('%Y%m%dT%H%M%S%fZ')",  # a time, not a day
        "stamp = datetime.now(UTC).isoformat(timespec='microseconds')",
        "now = clock()\nday = now.date()",  # an injected clock: the caller chose it
        "day = datetime.now(ZoneInfo(zone_name)).date()",  # the user's zone, asked for
        "day = dt.date.fromisoformat(text)",
        "def f():\n    now = datetime.now(UTC)\ndef g(now):\n    return now.date()",
    ],
)
def test_the_check_leaves_other_times_alone(innocent: str) -> None:
    assert inline_days(innocent) == [], innocent
