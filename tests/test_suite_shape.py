"""The shape of the test suite (CONTRIBUTING.md, *Tests*): each test lives in the directory of
the package it tests, says what it proves rather than which review found the problem, launches
Chromium as ``tests/_browser.py`` says, and no test module is over the line limit
(``tests/test_code_shape.py``)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from tests._browser import CHROMIUM, CHROMIUM_ARGS
from tests._packages import PACKAGES

ROOT = Path(__file__).resolve().parent.parent
#: Test directories named for a module rather than a package: ``tests/mcp`` (the MCP server,
#: ``client/mcp_stdio.py``) and ``tests/skills`` (``client/skills`` and ``cloudskills``).
ALIASES = {"mcp": ROOT / "client" / "mcp_stdio.py", "skills": ROOT / "cloudskills"}
#: A review's number ("issue N", "finding M"): it names who found a problem, not what is proved.
REVIEW_NUMBER = re.compile(r"\b(?:issue|finding)s?\s*#?\d", re.IGNORECASE)


def _test_modules() -> list[Path]:
    return sorted([*(ROOT / "tests").rglob("*.py"), *(ROOT / "privacy_tests").rglob("*.py")])


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _packages() -> set[str]:
    """The product packages and every subpackage's name (``tools``, ``recipes``, ``lake``)."""
    names = set(PACKAGES)
    for package in PACKAGES:
        names |= {init.parent.name for init in (ROOT / package).rglob("__init__.py")}
    return names


def _prose(path: Path) -> list[str]:
    source = path.read_text(encoding="utf-8")
    texts = [
        doc
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (doc := ast.get_docstring(node))
    ]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return texts + [tok.string for tok in tokens if tok.type == tokenize.COMMENT]


def test_every_test_directory_is_named_for_a_package() -> None:
    folders = {p.parent for p in (ROOT / "tests").rglob("test_*.py")} - {ROOT / "tests"}
    assert folders, "the tests live in directories"
    assert all(path.exists() for path in ALIASES.values())
    known = _packages() | set(ALIASES)
    assert sorted(_rel(f) for f in folders if f.name not in known) == []


def _review_numbers(path: Path) -> list[str]:
    found = [text for text in _prose(path) if REVIEW_NUMBER.search(text)]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return found + [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and REVIEW_NUMBER.search(node.name.replace("_", " "))
    ]


def test_no_test_names_the_review_that_found_its_problem() -> None:
    found = {_rel(p): numbers for p in _test_modules() if (numbers := _review_numbers(p))}
    assert found == {}, "say what the test proves; the CHANGELOG keeps the history"


def test_the_review_number_check_sees_what_it_must() -> None:
    for text in ("Issue 16, finding 10", "issue 22 (7)", "findings 4 and 7", "finding 13"):
        assert REVIEW_NUMBER.search(text), text
    for text in ("finding it anywhere", "issues_of(request)", "the issued token 16"):
        assert not REVIEW_NUMBER.search(text), text


def _launch_constants(path: Path) -> list[str]:
    """The Chromium path and launch arguments ``path`` spells out itself (a string that IS one,
    not a sentence that mentions it)."""
    own = {str(CHROMIUM), *CHROMIUM_ARGS}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in own]


def test_every_browser_test_launches_chromium_from_tests_browser() -> None:
    """One place for where Chromium is and how it starts: a flag changed there reaches all."""
    found = {_rel(p): names for p in _test_modules()
             if p.name not in ("_browser.py", "test_suite_shape.py")
             and (names := _launch_constants(p))}  # fmt: skip
    assert found == {}, "import CHROMIUM and CHROMIUM_ARGS from tests/_browser.py"
