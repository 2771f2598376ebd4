"""Every file a page of docs/ (or the README) cites exists: ``path/like/this.py``, a schema, a
SQL file, every relative Markdown link (anchors aside), and every bare ``module.py`` somewhere
in the repository. Fenced code blocks are examples (a skill's ``bin/check.py``) and are not
read. No page cites anything outside the repository: no link or path that leaves it, no path
of a developer's machine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]

#: A repository path: at least one folder, a known extension, no glob and no URL before it.
_PATH = re.compile(
    r"(?<![\w./:<>*-])((?:[a-z_][\w-]*/)+[\w.-]*\w\.(?:py|sql|json|md|toml|css|yml|yaml))(?![\w*])"
)
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_BARE = re.compile(r"`(\w+\.py)`")
_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_SKIP = {".venv", ".git", "__pycache__", "demo-output", "test-artifacts"}


def _repo_files() -> set[str]:
    names: set[str] = set()
    for path in ROOT.rglob("*.py"):
        if not _SKIP & set(path.relative_to(ROOT).parts):
            names.add(path.name)
    return names


def _exists(page: Path, cited: str) -> bool:
    return (ROOT / cited).exists() or (page.parent / cited).exists()


def _cited(page: Path) -> list[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    paths = set(_PATH.findall(text))
    links = {
        link for link in _LINK.findall(text) if not re.match(r"[a-z]+:", link)
    }  # not http:, mailto:
    return sorted(paths | links)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_cited_file_exists(page: Path) -> None:
    # Outputs a run writes (ignored by git) are not files of the repository.
    outputs = tuple(f"{folder}/" for folder in ("test-artifacts", "demo-output"))
    missing = [c for c in _cited(page) if not c.startswith(outputs) and not _exists(page, c)]
    assert missing == [], f"{page.name} cites files that do not exist: {missing}"


#: A path of one machine: a home, a checkout under /work, a temporary file.
_MACHINE = re.compile(r"(?<![\w.])(?:/home/|/Users/|/root/|/work/|/tmp/|[A-Z]:\\Users\\)")


def _outside(page: Path, root: Path = ROOT) -> list[str]:
    """What ``page`` cites outside the repository: a ``../`` path that leaves it or is not in
    it (a spec beside the checkout, another checkout), and any path of a developer's machine."""
    text = page.read_text(encoding="utf-8")
    upward = {c for c in _cited(page) if c.startswith("../")}
    upward |= set(re.findall(r"`(\.\./[^`\s]+)`", _FENCE.sub("", text)))
    leaving = [
        c
        for c in upward
        if not (page.parent / c).resolve().is_relative_to(root) or not (page.parent / c).exists()
    ]
    return sorted(leaving) + _MACHINE.findall(text)


@pytest.mark.parametrize("page", [*PAGES, ROOT / "CONTRIBUTING.md"], ids=lambda p: p.name)
def test_nothing_outside_the_repository_is_cited(page: Path) -> None:
    assert _outside(page) == []


def test_the_check_sees_a_path_outside(tmp_path: Path) -> None:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "haproxy.cfg").write_text("", encoding="utf-8")
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "A spec (`../shared/spec/x.md`), [another checkout](../../other/y.md), the front door "
        "[`deploy/haproxy.cfg`](../deploy/haproxy.cfg), /home/me/lmcp and /work/wt/a.\n",
        encoding="utf-8",
    )
    found = _outside(page, root=tmp_path)
    assert found == ["../../other/y.md", "../shared/spec/x.md", "/home/", "/work/"]


_TEXT_FILES = (".py", ".md", ".toml", ".yaml", ".yml", ".cfg", ".sql")


def test_no_file_cites_a_style_guide_that_is_not_here() -> None:
    """The style rules are CONTRIBUTING.md's *Style*; a citation of another guide (one kept
    beside a checkout) points at nothing a reader of the repository has."""
    cited = re.compile(r"\bSTYLE\b")
    files = [
        p
        for p in ROOT.rglob("*")
        if (p.suffix in _TEXT_FILES or p.name == "Makefile")
        and not _SKIP & set(p.relative_to(ROOT).parts)
        and not any(part.startswith(".") for part in p.relative_to(ROOT).parts[:-1])
        and p.is_file()
        and p != Path(__file__)  # this test names what it looks for
    ]
    assert len(files) > 300
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in files
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if cited.search(line)
    ]
    assert found == []
    assert cited.search("(STYLE.md)") and not cited.search("_STYLE = {}")
