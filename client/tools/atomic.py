"""Atomic file writes shared by the notes store and the recipe store.

``write_new`` publishes a complete file under a name only if that name is free (exclusive
create: of two concurrent writers exactly one wins); ``write_replace`` swaps in a complete file
(a reader, or a crash, sees the old content or the new, never a mix).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from client._files import atomic_write_bytes

__all__ = ["fsync_dir", "write_new", "write_replace"]


def fsync_dir(folder: Path) -> None:
    """Make a rename or link in ``folder`` durable (a no-op where folders cannot be opened)."""
    if os.name == "nt":  # pragma: no cover - Windows cannot fsync a folder
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_temp(folder: Path, data: bytes) -> Path:
    tmp = folder / f".tmp-{secrets.token_hex(8)}"
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
    tmp = _write_temp(folder, data)
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
    """Write ``data`` at ``path`` atomically, replacing whatever is there."""
    atomic_write_bytes(path, data)
    fsync_dir(path.parent)
