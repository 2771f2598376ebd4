"""``list_files`` recursive is linear in the tree and bounded in entries and time.

Linear: trees 100, 400 and 1,100 folders deep (each level a folder, a file and a symlink) are
walked with the filesystem calls counted -- every ``os`` call that touches the filesystem and
every ``DirEntry.stat`` -- and the calls per entry must not grow with the depth (the old walk
resolved every entry from the root: calls per entry grew with the depth, and 1,100 levels of
nested generators overflowed the stack). Bounded: the caller's ``limit``, the walk's budget of
examined entries and its deadline (a clock the test moves) each end the walk with
``truncated: true`` and the reason in ``truncated_by``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from client.host import Reply
from client.tools import FilesRoot, files_handlers

pytestmark = pytest.mark.skipif(os.name != "posix", reason="builds trees with symlinks")

_FS_CALLS = ("open", "stat", "lstat", "fstat", "listdir", "readlink", "mkdir", "scandir")


class _CountedEntry:
    """A ``DirEntry`` whose ``stat`` (a system call the ``os`` module never sees) is counted."""

    def __init__(self, entry: os.DirEntry[Any], calls: Counter[str]) -> None:
        self._entry, self._calls = entry, calls
        self.name, self.path = entry.name, entry.path

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        self._calls["DirEntry.stat"] += 1
        return self._entry.stat(follow_symlinks=follow_symlinks)

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        self._calls["DirEntry.is_dir"] += 1
        return self._entry.is_dir(follow_symlinks=follow_symlinks)

    def is_symlink(self) -> bool:
        self._calls["DirEntry.is_symlink"] += 1
        return self._entry.is_symlink()


@pytest.fixture
def count_fs_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every filesystem call made through ``os`` (which pathlib and os.path use too)."""
    calls: Counter[str] = Counter()
    for name in _FS_CALLS:
        real = getattr(os, name)

        def spy(*args: Any, _real: Callable[..., Any] = real, _name: str = name, **kw: Any) -> Any:
            calls[_name] += 1
            result = _real(*args, **kw)
            if _name == "scandir":
                return _Listing(result, calls)
            return result

        monkeypatch.setattr(os, name, spy)
    return calls


class _Listing:
    def __init__(self, listing: Any, calls: Counter[str]) -> None:
        self._listing, self._calls = listing, calls

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        self._listing.close()

    def __iter__(self) -> Iterator[_CountedEntry]:
        return (_CountedEntry(e, self._calls) for e in self._listing)

    def close(self) -> None:
        self._listing.close()


def _chain(root: Path, depth: int) -> int:
    """``depth`` nested folders, each holding a file and a symlink to it; the entry count."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY)
    try:
        for _ in range(depth):
            with open(os.open("f.txt", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "wb") as f:
                f.write(b"x")
            os.symlink("f.txt", "l", dir_fd=fd)
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    return 3 * depth


def _unchain(root: Path, depth: int) -> None:
    """Remove a ``_chain`` tree bottom-up without recursion.

    pytest's clean-up of old temporary folders recurses once per level and overflows the stack on
    1,100 levels, failing a later session; the test removes what it built.
    """
    fds = [os.open(root, os.O_RDONLY)]
    try:
        for _ in range(depth - 1):
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        while fds:
            fd = fds.pop()
            for name in ("l", "f.txt"):
                os.unlink(name, dir_fd=fd)
            os.rmdir("d", dir_fd=fd)
            os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)
    root.rmdir()


def _list(root: Path, **args: Any) -> dict[str, Any]:
    handler = files_handlers(FilesRoot(root))["list_files"]
    out = handler(args)
    result: dict[str, Any] = out.result if isinstance(out, Reply) else out
    return result


def test_a_deep_tree_costs_the_same_calls_per_entry_as_a_shallow_one(
    tmp_path: Path, count_fs_calls: Counter[str]
) -> None:
    per_entry = {}
    for depth in (100, 400, 1100):
        root = tmp_path / f"depth-{depth}"
        entries = _chain(root, depth)
        count_fs_calls.clear()
        try:
            # The handler itself: the catalogue caps ``limit`` at 1,000; the walk is measured.
            listed = _list(root, recursive=True, limit=10 * entries)
            per_entry[depth] = sum(count_fs_calls.values()) / entries
        finally:
            _unchain(root, depth)
        assert listed["count"] == entries and listed["truncated"] is False
        deepest = "/".join(["d"] * (depth - 1) + ["l"])
        assert {"path": deepest, "type": "file", "size": 1} in listed["entries"]
    # Linear: a constant number of calls per entry, whatever the depth (the old walk: ~depth).
    assert max(per_entry.values()) <= 1.2 * min(per_entry.values()), per_entry
    assert max(per_entry.values()) <= 10, per_entry


def test_the_walk_lists_what_the_old_walk_listed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "b" / "c").mkdir(parents=True)
    (root / "a.txt").write_text("aa")
    (root / "b" / "c" / "z.txt").write_text("zzz")
    (root / "b" / "in").symlink_to(root / "a.txt")
    (root / "b" / "dir-link").symlink_to(root / "b" / "c")  # listed, never descended into
    (root / "b" / "out").symlink_to(tmp_path)  # leaves the root: skipped
    (root / "b" / "dangling").symlink_to(root / "missing")
    os.mkfifo(root / "fifo")
    listed = _list(root, recursive=True)
    assert [(e["path"], e["type"], e["size"]) for e in listed["entries"]] == [
        ("a.txt", "file", 2),
        ("b", "folder", None),
        ("b/c", "folder", None),
        ("b/c/z.txt", "file", 3),
        ("b/dir-link", "folder", None),
        ("b/in", "file", 2),
        ("fifo", "file", 0),
    ]
    assert [e["path"] for e in _list(root, path="b")["entries"]] == [
        "b/c",
        "b/dir-link",
        "b/in",
    ]


def test_the_limit_ends_the_walk_with_a_truncated_result(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _chain(root, 50)
    listed = _list(root, recursive=True, limit=10)
    assert (listed["count"], listed["truncated"], listed["truncated_by"]) == (10, True, "limit")


def test_the_examined_budget_ends_a_walk_that_lists_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Entries that are examined but never listed (symlinks out of the root) count too."""
    monkeypatch.setattr("client.tools._walk.MAX_EXAMINED", 100)
    root = tmp_path / "root"
    root.mkdir()
    for n in range(300):
        (root / f"out-{n:03d}").symlink_to(tmp_path)
    listed = _list(root, recursive=True)
    assert (listed["count"], listed["truncated"], listed["truncated_by"]) == (
        0,
        True,
        "entry_budget",
    )


def test_the_deadline_ends_the_walk_with_a_truncated_result(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _chain(root, 200)
    ticks = iter(range(10**6))  # one second passes at every look at the clock
    handler = files_handlers(FilesRoot(root), clock=lambda: float(next(ticks)))["list_files"]
    listed = handler({"recursive": True, "limit": 1000})
    assert listed["truncated"] is True and listed["truncated_by"] == "deadline"
    assert 0 < listed["count"] < 600


def test_a_folder_moved_during_the_walk_stops_it_never_walks_elsewhere(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a" / "deep").mkdir(parents=True)
    (root / "a" / "deep" / "x.txt").write_text("x")
    (root / "z.txt").write_text("z")
    (tmp_path / "elsewhere").mkdir()
    walked = []
    handler = files_handlers(FilesRoot(root))["list_files"]

    from client.tools._walk import Walk

    walk = Walk(root.resolve(), root.resolve(), True, deadline=float("inf"))
    for found in walk:
        walked.append(found.rel)
        if found.rel == "a/deep/x.txt":  # while inside a/deep: move it out of the root
            os.rename(root / "a" / "deep", tmp_path / "elsewhere" / "deep")
    assert walked == ["a", "a/deep", "a/deep/x.txt"] and walk.stopped == "changed"
    assert handler({"recursive": True})["count"] == 2  # a fresh walk sees the new tree
