"""The files tools' walk of a folder: linear in the tree, bounded in entries and time.

Pre-order, each folder's entries sorted by name, without recursion (a tree 10,000 folders deep
is walked like a flat one). Where the platform has directory descriptors (POSIX), the walk
holds one open folder at a time and moves by descriptor: a child is opened relative to its
parent (``O_NOFOLLOW``: a folder swapped for a symlink is not followed), the parent is
re-opened as the child's ``..`` and accepted only if it is the same folder (device and inode)
it left. So each entry costs a constant number of system calls whatever its depth, and no
path longer than ``PATH_MAX`` is ever built for the kernel. Elsewhere the walk goes by path.

A symlink is listed as what it points to when that lies inside the root, and never descended
into. The walk stops -- and says why (:attr:`Walk.stopped`) -- at its deadline, after
``max_examined`` entries, or when a folder changed under it.
"""

from __future__ import annotations

import os
import stat
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_EXAMINED", "Found", "Walk"]

#: Entries a walk examines at most (listed, skipped or not yet reached by the caller's limit).
MAX_EXAMINED = 200_000
_FD_WALK = os.scandir in os.supports_fd and os.open in os.supports_dir_fd
_PROC_FD = Path("/proc/self/fd")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
_O_PATH = getattr(os, "O_PATH", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: Linux: a symlink's target is resolved by the kernel and named by /proc, in O(1) calls.
_KERNEL_RESOLVES = bool(_O_PATH) and _PROC_FD.is_dir()


@dataclass(frozen=True, slots=True)
class Found:
    """One entry: its path relative to the root, whether it is a folder, its size if a file."""

    rel: str
    is_dir: bool
    size: int | None
    #: A real folder (not a symlink to one), which the walk descends into; its identity.
    _ident: tuple[int, int] | None = None


class Walk:
    """Iterate :class:`Found` entries under ``top`` (a real folder inside ``root``)."""

    def __init__(
        self,
        root: Path,
        top: Path,
        recursive: bool,
        *,
        deadline: float,
        clock: Callable[[], float] = time.monotonic,
        max_examined: int | None = None,
    ) -> None:
        self.root, self.top, self.recursive = root, top, recursive
        self.deadline, self.clock = deadline, clock
        self.max_examined = MAX_EXAMINED if max_examined is None else max_examined
        #: None while the walk is whole; else ``deadline``, ``entry_budget`` or ``changed``.
        self.stopped: str | None = None
        self._examined = 0
        self._root_prefix = str(root).rstrip(os.sep) + os.sep

    def __iter__(self) -> Iterator[Found]:
        return self._fd_walk() if _FD_WALK else self._path_walk()

    # -- bounds ---------------------------------------------------------------------------
    def _over(self) -> bool:
        self._examined += 1
        if self._examined > self.max_examined:
            self.stopped = "entry_budget"
        elif self.clock() >= self.deadline:
            self.stopped = "deadline"
        return self.stopped is not None

    def _inside(self, real: str) -> bool:
        return real == str(self.root) or real.startswith(self._root_prefix)

    def _prefix(self) -> str:
        rel = self.top.relative_to(self.root).as_posix()
        return "" if rel == "." else rel + "/"

    # -- by descriptor (POSIX) ------------------------------------------------------------
    def _fd_walk(self) -> Iterator[Found]:
        fd = os.open(self.top, _DIR_FLAGS)
        try:
            info = os.fstat(fd)
            frames = [(self._fd_children(fd, self._prefix()), (info.st_dev, info.st_ino))]
            while frames and self.stopped is None:
                children, _ = frames[-1]
                if not children:
                    frames.pop()
                    if frames:
                        fd = self._fd_up(fd, frames[-1][1])
                    continue
                found = children.popleft()
                yield found
                if self.recursive and found._ident is not None and self.stopped is None:
                    child = self._fd_down(fd, found)
                    if child is not None:
                        fd = child
                        frames.append((self._fd_children(fd, found.rel + "/"), found._ident))
        finally:
            os.close(fd)

    def _fd_children(self, fd: int, prefix: str) -> deque[Found]:
        out: deque[Found] = deque()
        try:
            with os.scandir(fd) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            return out
        for entry in entries:
            if self._over():
                break
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = prefix + entry.name
            if stat.S_ISDIR(info.st_mode):
                out.append(Found(rel, True, None, (info.st_dev, info.st_ino)))
            elif stat.S_ISLNK(info.st_mode):
                target = self._fd_link(fd, prefix, entry.name)
                if target is not None:
                    out.append(Found(rel, stat.S_ISDIR(target.st_mode), _size(target)))
            else:
                out.append(Found(rel, False, info.st_size))
        return out

    def _fd_link(self, fd: int, prefix: str, name: str) -> os.stat_result | None:
        """What the symlink ``name`` points to, when that lies inside the root."""
        if not _KERNEL_RESOLVES:  # pragma: no cover - POSIX without /proc
            # Resolved by path: a symlink then costs its depth (the kernel's way is Linux's).
            real = os.path.realpath(os.path.join(self.root, prefix, name))
            return _stat_or_none(real) if self._inside(real) else None
        try:
            target = os.open(name, _O_PATH, dir_fd=fd)  # the kernel resolves the whole chain
        except OSError:
            return None
        try:
            real = os.readlink(_PROC_FD / str(target))
            return os.fstat(target) if self._inside(real) else None
        except OSError:
            return None
        finally:
            os.close(target)

    def _fd_down(self, fd: int, found: Found) -> int | None:
        """The folder ``found`` opened below ``fd`` (then ``fd`` is closed); None: skip it."""
        name = found.rel.rsplit("/", 1)[-1]
        try:
            child = os.open(name, _DIR_FLAGS | _O_NOFOLLOW, dir_fd=fd)
        except OSError:
            return None
        info = os.fstat(child)
        if (info.st_dev, info.st_ino) != found._ident:  # swapped since it was listed
            os.close(child)
            return None
        os.close(fd)
        return child

    def _fd_up(self, fd: int, parent: tuple[int, int]) -> int:
        """The parent of ``fd`` (then ``fd`` is closed), if it is still the folder we left."""
        try:
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
        except OSError:
            self.stopped = "changed"
            return fd
        info = os.fstat(up)
        if (info.st_dev, info.st_ino) != parent:  # moved meanwhile: never walk elsewhere
            os.close(up)
            self.stopped = "changed"
            return fd
        os.close(fd)
        return up

    # -- by path (no directory descriptors) -----------------------------------------------
    def _path_walk(self) -> Iterator[Found]:  # pragma: no cover - exercised on Windows only
        frames = [self._path_children(self.top, self._prefix())]
        while frames and self.stopped is None:
            if not frames[-1]:
                frames.pop()
                continue
            found = frames[-1].popleft()
            yield found
            if self.recursive and found._ident is not None and self.stopped is None:
                frames.append(self._path_children(self.root / found.rel, found.rel + "/"))

    def _path_children(self, folder: Path, prefix: str) -> deque[Found]:  # pragma: no cover
        out: deque[Found] = deque()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            return out
        for entry in entries:
            if self._over():
                break
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = prefix + entry.name
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                target = _stat_or_none(real) if self._inside(real) else None
                if target is not None:
                    out.append(Found(rel, stat.S_ISDIR(target.st_mode), _size(target)))
            elif stat.S_ISDIR(info.st_mode):
                out.append(Found(rel, True, None, (info.st_dev, info.st_ino)))
            else:
                out.append(Found(rel, False, info.st_size))
        return out


def _size(info: os.stat_result) -> int | None:
    return None if stat.S_ISDIR(info.st_mode) else info.st_size


def _stat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None
