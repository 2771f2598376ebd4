"""``service/http.py`` subclasses a private class of uvicorn, so the uvicorn it runs on is
pinned to the series ``tests/service/test_http_hooks.py`` was run on: pyproject.toml allows one
minor series, uv.lock holds a release of it, the installed uvicorn is that release, and
docs/operations.md (*Why a protocol of our own*) states the same range."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]


def _requirement() -> Requirement:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    (found,) = [
        Requirement(line) for line in extras["collector"] if Requirement(line).name == "uvicorn"
    ]
    return found


def _locked() -> Version:
    lock = tomllib.loads((REPO / "uv.lock").read_text(encoding="utf-8"))
    (found,) = [p["version"] for p in lock["package"] if p["name"] == "uvicorn"]
    return Version(found)


def test_pyproject_allows_one_minor_series() -> None:
    specs = {spec.operator: Version(spec.version) for spec in _requirement().specifier}
    assert set(specs) == {">=", "<"}, specs
    low, high = specs[">="], specs["<"]
    assert (high.major, high.minor) == (low.major, low.minor + 1), (low, high)


def test_the_lock_and_the_installed_uvicorn_are_in_that_series() -> None:
    allowed = _requirement().specifier
    assert _locked() in allowed
    assert Version(version("uvicorn")) == _locked()  # the hooks test ran on the locked one


def test_operations_states_the_range_and_why() -> None:
    page = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    section = page.split("### Why a protocol of our own", 1)[1].split("\n## ", 1)[0]
    ranges = set()
    for span in re.findall(r"`([^`]+)`", section):
        try:
            ranges.add(SpecifierSet(span))
        except InvalidSpecifier:
            continue
    assert _requirement().specifier in ranges, ranges
    assert "tests/service/test_http_hooks.py" in section and "HttpToolsProtocol" in section
