"""docs/architecture.md tells the truth about the code it describes: every package and
sub-package is on it, every file and folder it names exists, every class it names is defined,
and its error tree holds every error class of the product, each under the class it derives
from, at the file that defines it."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from functools import cache

import pytest

from tests._packages import PACKAGES, REPO

PAGE = REPO / "docs" / "architecture.md"
#: What the page describes beside the product: the lake's development code.
DESCRIBED = (*PACKAGES, "lakedev")
#: Names the page cites from outside the repository (platform APIs, uvicorn's class).
ELSEWHERE = {"HttpToolsProtocol", "EnumProcesses", "AEDeterminePermissionToAutomateTarget"}

_BUILTIN_ERRORS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
#: A line of the tree: its indent, the class, and (unless it only groups) the defining file.
_TREE_LINE = re.compile(r"^(?P<indent>[ │]*)[├└]── (?P<name>\w+)(?:\s+(?P<path>[\w/.]+\.py):)?")
_SPAN = re.compile(r"`([^`\n]+)`")
_CLASS_NAME = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+")
_PATHLIKE = re.compile(r"(?:[a-z_][\w-]*/)+(?:[\w.-]+)?")


@dataclass(frozen=True)
class _Class:
    name: str
    path: str
    bases: tuple[str, ...]  # the last dotted part of each base


@cache
def _classes() -> tuple[_Class, ...]:
    found = []
    for package in DESCRIBED:
        for path in sorted((REPO / package).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    bases = tuple(ast.unparse(b).split(".")[-1] for b in node.bases)
                    found.append(_Class(node.name, path.relative_to(REPO).as_posix(), bases))
    return tuple(found)


def error_classes(classes: tuple[_Class, ...]) -> list[_Class]:
    """The classes that derive, directly or not, from a built-in exception."""
    by_name: dict[str, list[_Class]] = {}
    for c in classes:
        by_name.setdefault(c.name, []).append(c)

    def is_error(name: str, seen: frozenset[str]) -> bool:
        if name in _BUILTIN_ERRORS:
            return True
        if name in seen:
            return False
        return any(is_error(base, seen | {name}) for c in by_name.get(name, []) for base in c.bases)

    return [c for c in classes if any(is_error(b, frozenset({c.name})) for b in c.bases)]


def _text() -> str:
    return PAGE.read_text(encoding="utf-8")


def tree(text: str) -> list[tuple[str, str, str]]:
    """The error tree's entries: (class, its file, the class it hangs under)."""
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 2)[1]
    entries: list[tuple[str, str, str]] = []
    parents: list[tuple[int, str]] = [(-1, "Exception")]
    for line in block.splitlines():
        match = _TREE_LINE.match(line)
        if match is None:
            continue
        depth, name = len(match.group("indent")), match.group("name")
        while parents[-1][0] >= depth:
            parents.pop()
        if match.group("path"):
            entries.append((name, match.group("path"), parents[-1][1]))
        parents.append((depth, name))
    return entries


def test_every_package_and_sub_package_is_described() -> None:
    text = _text()
    missing = [p for p in DESCRIBED if f"`{p}/`" not in text]
    subpackages = [
        init.parent.relative_to(REPO).as_posix()
        for package in PACKAGES
        for init in (REPO / package).glob("*/__init__.py")
    ]
    assert "collector/lake" in subpackages and "collector/releases" in subpackages
    missing += [s for s in subpackages if f"{s}/" not in text]
    assert missing == []


def test_every_named_file_and_folder_exists() -> None:
    named = {
        span
        for span in _SPAN.findall(re.sub(r"^```.*?^```", "", _text(), flags=re.M | re.S))
        if _PATHLIKE.fullmatch(span) and not span.startswith(("http", "/"))
    }
    assert len(named) > 30
    assert sorted(n for n in named if not (REPO / n).exists()) == []


def test_every_named_class_is_defined() -> None:
    defined = {c.name for c in _classes()}
    for package in DESCRIBED:
        for path in (REPO / package).rglob("*.py"):
            tree_ = ast.parse(path.read_text(encoding="utf-8"))
            defined |= {
                t.id
                for node in tree_.body
                if isinstance(node, ast.Assign | ast.AnnAssign)
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Name)
            }
    named = {
        head
        for span in _SPAN.findall(_text())
        if _CLASS_NAME.fullmatch(head := re.split(r"[.(\[ ]", span)[0])
    }
    assert len(named) > 20
    assert sorted(named - defined - ELSEWHERE) == []


def test_the_error_tree_holds_every_error_class() -> None:
    in_code = {(c.name, c.path) for c in error_classes(_classes())}
    in_tree = {(name, path) for name, path, _ in tree(_text())}
    assert len(in_code) > 20
    assert sorted(in_code - in_tree) == [], "an error class missing from the tree"
    assert sorted(in_tree - in_code) == [], "the tree names an error class that is not there"


def test_each_error_hangs_under_the_class_it_derives_from() -> None:
    bases = {(c.name, c.path): c.bases for c in _classes()}
    wrong = [
        f"{name} ({path}) under {parent}"
        for name, path, parent in tree(_text())
        if parent not in bases.get((name, path), ())
    ]
    assert wrong == []


def test_the_tree_reader_sees_nesting() -> None:
    text = (
        "\n## Errors\n```\nException\n ├── A   a/x.py: one\n │    └── B   b/y.py: two\n"
        " ├── ValueError\n │    └── C   c/z.py: three\n └── D   d/w.py: four\n```\n## Next\n"
    )
    assert tree(text) == [
        ("A", "a/x.py", "Exception"),
        ("B", "b/y.py", "A"),
        ("C", "c/z.py", "ValueError"),
        ("D", "d/w.py", "Exception"),
    ]


@pytest.mark.parametrize(
    ("source", "errors"),
    [
        ("class A(Exception): ...\nclass B(A): ...\nclass C: ...", {"A", "B"}),
        (
            "class E(errors.ServiceError): ...\nclass ServiceError(ValueError): ...",
            {"E", "ServiceError"},
        ),
        ("class Loop(Loop): ...", set()),
    ],
)
def test_the_error_finder(source: str, errors: set[str]) -> None:
    classes = tuple(
        _Class(n.name, "m.py", tuple(ast.unparse(b).split(".")[-1] for b in n.bases))
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.ClassDef)
    )
    assert {c.name for c in error_classes(classes)} == errors
