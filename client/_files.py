"""Small, careful file helpers shared by the whole client.

- ``atomic_write_bytes`` / ``write_replace``: a reader, or a crash, sees the old content or
  the new, never a mix (``write_replace`` also makes the rename durable);
- ``write_new``: publish a complete file under a name only if the name is free (exclusive
  create: of two concurrent writers exactly one wins);
- ``file_lock``: an exclusive inter-process advisory lock (waited for, or only tried).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "atomic_write_bytes",
    "file_lock",
    "fsync_dir",
    "write_new",
    "write_replace",
    "write_temp",
]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a reader (or a crash) sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def file_lock(path: Path, *, wait: bool = True) -> Iterator[bool]:
    """An exclusive advisory lock held on ``path`` (created if missing) for the block; yields
    whether it is held. ``wait=False`` does not wait for another holder: it yields False at
    once instead (the block then runs without the lock and must not need it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            handle.seek(0)
            try:
                msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK if wait else msvcrt.LK_NBLCK, 1)
            except OSError:
                if wait:
                    raise
                yield False
                return
            try:
                yield True
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def fsync_dir(folder: Path) -> None:
    """Make a rename or link in ``folder`` durable (a no-op where folders cannot be opened)."""
    if sys.platform == "win32":  # pragma: no cover - Windows cannot fsync a folder
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_temp(folder: Path, data: bytes, name: str | None = None) -> Path:
    """A complete, fsynced new file in ``folder`` (named ``name``, else a random hidden name)."""
    tmp = folder / (name or f".tmp-{secrets.token_hex(8)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def write_new(path: Path, data: bytes) -> bool:
    """Publish ``data`` at ``path`` only if nothing is there; False when the name is taken.

    The content is written to a temporary file first and then hard-linked into place, so the
    name appears with its whole content at once; ``link`` fails when the name exists. Where
    hard links are not supported, an ``O_EXCL`` create is the fallback.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    tmp = write_temp(folder, data)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # pragma: no cover - file systems without hard links
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return False
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    fsync_dir(folder)
    return True


def write_replace(path: Path, data: bytes) -> None:
    """Write ``data`` at ``path`` atomically, replacing whatever is there, durably."""
    atomic_write_bytes(path, data)
    fsync_dir(path.parent)
