"""The shape of the code (CONTRIBUTING.md, *Style*):

- no module over ``MAX_LINES`` lines: the product packages, the scripts, the benchmarks and
  the development code; the tests too, in a test of their own with the modules still being
  split listed;
- no import circle in the product packages and no import upward or sideways between them,
  computed from every ``import`` statement the code holds (a late import inside a function
  counts as much as one at the top), so it runs at every ``make test-fast`` (``lint-imports``,
  in ``make check``, says the same of the layers with import-linter);
- no docstring or comment quoting a benchmark figure: measurements live in ``docs/`` (for the
  write path: ``docs/write-path.md``), where they can be dated and redone, not in code that
  outlives them.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import pytest

from tests._packages import DEV_PACKAGES, LAYER, PACKAGES, REPO

MAX_LINES = 450
_TESTS = ("tests", "privacy_tests")

#: A number followed by a unit of throughput or time: ``9,416 req/s``, ``~1.3 ms``, ``80 µs``.
FIGURE = re.compile(
    r"\d[\d,.]*\s*(?:[kKM]\s*)?(?:req/s|requests/s|signals/s|rows/s|µs|us\b|ms\b|ns\b)"
)


def _python(folders: Iterable[str]) -> list[Path]:
    return sorted(
        p
        for folder in folders
        for p in (REPO / folder).rglob("*.py")
        if "__pycache__" not in p.parts
    )


def _modules() -> list[Path]:
    return _python(PACKAGES)


def _not_tests() -> list[Path]:
    """Every module that is not a test: the product, scripts, benchmarks, development code."""
    others = [p for p in DEV_PACKAGES if p not in _TESTS]
    return [*_python((*PACKAGES, *others)), REPO / "conftest.py"]


def _sql_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.sql"))


def _prose(path: Path) -> list[str]:
    """Every docstring and comment of a Python module (its prose, not its code)."""
    source = path.read_text(encoding="utf-8")
    texts = [
        doc
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (doc := ast.get_docstring(node))
    ]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    texts += [tok.string for tok in tokens if tok.type == tokenize.COMMENT]
    return texts


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_packages_hold_modules() -> None:
    assert {p.parts[len(REPO.parts)] for p in _modules()} == set(PACKAGES)
    assert len(_modules()) > 50  # a moved tree must not make the checks below vacuous


# -- lines -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", _not_tests(), ids=_rel)
def test_no_module_is_over_the_line_limit(path: Path) -> None:
    assert _lines(path) <= MAX_LINES, f"{_rel(path)}: split it (at most {MAX_LINES} lines)"


@pytest.mark.parametrize("path", _python(_TESTS), ids=_rel)
def test_no_test_module_is_over_the_line_limit(path: Path) -> None:
    assert _lines(path) <= MAX_LINES, f"{_rel(path)}: split it (at most {MAX_LINES} lines)"


# -- imports -----------------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(files: Mapping[str, str]) -> dict[str, set[str]]:
    """Module -> the modules of ``files`` (name -> source) it imports, anywhere in its code.

    ``from a.b import c`` is an arrow to ``a.b.c`` when that is a module, else to ``a.b``; a
    name that is no module of ``files`` climbs to its nearest module (``a.b.C`` -> ``a.b``).
    The packages an import passes through (``a`` for ``a.b``) are not arrows: only what is
    named."""

    def nearest(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, source in files.items():
        tree = ast.parse(source)
        # What a relative import counts from: a package itself, a module's package.
        package = module if _is_package(files, module) else module.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out.update(t for a in node.names if (t := nearest(a.name)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                for alias in node.names:
                    named = f"{base}.{alias.name}"
                    if target := nearest(named if named in files else base):
                        out.add(target)
        out.discard(module)
        graph[module] = out
    return graph


def _is_package(files: Mapping[str, str], module: str) -> bool:
    return any(other.startswith(module + ".") for other in files)


def circles(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The import circles of ``graph``: its strongly connected parts of more than one module
    (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                part: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.add(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(frozenset(part))
    return found


@cache
def _product_graph() -> dict[str, set[str]]:
    files = {_module_name(p): p.read_text(encoding="utf-8") for p in _modules()}
    return import_graph(files)


def test_no_new_import_circle() -> None:
    found = [sorted(c) for c in circles(_product_graph())]
    assert found == [], "an import circle: move what both sides need into a module of its own"


def test_no_import_runs_up_or_sideways() -> None:
    """A package imports only packages of a lower layer (the same rule as ``lint-imports``)."""
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in _product_graph().items()
        for target in targets
        if (a := module.split(".")[0]) != (b := target.split(".")[0]) and LAYER[a] <= LAYER[b]
    )
    assert wrong == []


def test_the_graph_sees_every_kind_of_import() -> None:
    """The checks above are only as good as the graph: each spelling of an import is an arrow,
    a late one included, and a circle is found whatever its length."""
    files = {
        "p": "",
        "p.a": "from p import b\n",
        "p.b": "def f() -> None:\n    from . import c\n",
        "p.c": "import p.a\n",
        "p.d": "from .a import thing\nfrom p.sub.e import X\n",
        "p.sub": "",
        "p.sub.e": "from ..d import y\n",
        "p.f": "import os\nfrom p.a import z\n",
    }
    graph = import_graph(files)
    assert graph["p.a"] == {"p.b"} and graph["p.b"] == {"p.c"} and graph["p.c"] == {"p.a"}
    assert graph["p.d"] == {"p.a", "p.sub.e"} and graph["p.sub.e"] == {"p.d"}
    assert graph["p.f"] == {"p.a"}
    assert sorted(sorted(c) for c in circles(graph)) == [["p.a", "p.b", "p.c"], ["p.d", "p.sub.e"]]


def test_the_product_graph_is_not_empty() -> None:
    graph = _product_graph()
    assert sum(len(t) for t in graph.values()) > 300
    assert "collector.lake.mirror" in graph["collector.lake.analysis"]


# -- figures -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", _modules(), ids=_rel)
def test_no_docstring_or_comment_quotes_a_benchmark_figure(path: Path) -> None:
    found = [figure for text in _prose(path) for figure in FIGURE.findall(text)]
    assert not found, f"{_rel(path)} quotes {found}: move the measurement to docs/"


@pytest.mark.parametrize("path", _sql_files(), ids=_rel)
def test_no_sql_comment_quotes_a_benchmark_figure(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [f for line in lines if "--" in line for f in FIGURE.findall(line.split("--", 1)[1])]
    assert not found, f"{_rel(path)} quotes {found}: move the measurement to docs/"


@pytest.mark.parametrize(
    ("text", "figure"),
    [
        ("batch 1: 8,460 -> 9,416 req/s", True),
        ("a pydantic call (~1.3 ms for a 100-signal batch)", True),
        ("those cost ~80 µs a request", True),
        ("36,560 -> 52,400 signals/s", True),
        ("one INSERT per flush, ids at most 500 a batch", False),
        ("``linger_ms`` and ``quiet_ms`` settings", False),
    ],
)
def test_the_figure_pattern(text: str, figure: bool) -> None:
    assert bool(FIGURE.search(text)) is figure
