"""Every file a page of docs/ (or the README) cites exists: ``path/like/this.py``, a schema, a
SQL file, every relative Markdown link (anchors aside), and every bare ``module.py`` somewhere
in the repository. Fenced code blocks are examples (a skill's ``bin/check.py``) and are not
read; ``../shared/...`` is the shared spec, outside the repository."""

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
    missing = [
        c for c in _cited(page) if not c.startswith(("../", *outputs)) and not _exists(page, c)
    ]
    assert missing == [], f"{page.name} cites files that do not exist: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_bare_module_name_exists_somewhere(page: Path) -> None:
    known = _repo_files()
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    missing = sorted({name for name in _BARE.findall(text) if name not in known})
    assert missing == [], f"{page.name} names modules that do not exist: {missing}"


def test_the_check_sees_paths_and_links(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "See `collector/no_such_module.py`, [a page](gone.md#part), `collector/app.py`, "
        "`collector/migrations/*.sql` and https://example.org/x/y.py.\n"
        "```\n`collector/only_an_example.py`\n```\n",
        encoding="utf-8",
    )
    assert _cited(page) == ["collector/app.py", "collector/no_such_module.py", "gone.md"]
    assert [c for c in _cited(page) if not _exists(page, c)] == [
        "collector/no_such_module.py",
        "gone.md",
    ]
