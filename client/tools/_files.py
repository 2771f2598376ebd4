"""Files under the user-chosen files root: no path escapes it.

Every path an agent gives is relative to the root. It is refused when it is absolute, names a
drive, holds a NUL, or -- once resolved, following any symlink -- lands outside the root. The
refusals name the rule, never the path. Only regular files are read (a FIFO, socket or device
in the root would block a worker thread), and reads stop at a deadline. Folders are walked by
``client.tools._walk`` (linear in the tree, bounded in entries and time).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from client._files import write_replace
from client.errors import ToolFailure
from client.host import Handler, Reply
from client.tools._common import not_found, opt_int, opt_str
from client.tools._walk import Walk
from contract.schema import ErrorClass, Outcome

__all__ = ["FilesRoot", "files_handlers"]


#: Files larger than this are searched by name only.
SEARCH_CONTENT_LIMIT = 1024 * 1024
SNIPPET_CHARS = 160
#: Wall-clock budgets: one read_file, one list_files walk, one whole search_files walk.
READ_DEADLINE_S = 5.0
LIST_DEADLINE_S = 10.0
SEARCH_DEADLINE_S = 10.0
_CHUNK = 64 * 1024


def _not_regular() -> ToolFailure:
    return ToolFailure(
        ErrorClass.invalid_arguments,
        "argument 'path' is not a regular file",
        code="not_a_regular_file",
    )


def read_regular(path: Path, max_bytes: int, deadline: float) -> tuple[bytes, int]:
    """(the first ``max_bytes`` bytes, the size) of a REGULAR file, read until ``deadline``.

    O_NONBLOCK: opening a FIFO never waits for a writer; the fstat of the opened descriptor
    (not of the name, which could be swapped) refuses anything but a regular file.
    O_NOFOLLOW: a symlink swapped in after the path was checked is refused, not followed.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_regular()
        chunks: list[bytes] = []
        kept = 0
        while kept < max_bytes and time.monotonic() < deadline:
            chunk = os.read(fd, min(_CHUNK, max_bytes - kept))
            if not chunk:
                break
            chunks.append(chunk)
            kept += len(chunk)
        return b"".join(chunks), info.st_size
    finally:
        os.close(fd)


def _outside() -> ToolFailure:
    return ToolFailure(
        ErrorClass.permission_denied,
        "argument 'path' leads outside the files root",
        code="outside_files_root",
    )


class FilesRoot:
    """Resolves agent-given relative paths inside ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def real_root(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root.resolve(strict=True)

    def resolve(self, rel: str) -> Path:
        """The real path of ``rel`` inside the root; refused when it would leave the root."""
        if "\x00" in rel:
            raise ToolFailure(ErrorClass.invalid_arguments, "argument 'path' holds a NUL character")
        if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).drive or rel.startswith("\\"):
            raise _outside()
        root = self.real_root()
        target = (root / rel.replace("\\", "/")).resolve(strict=False)
        if target != root and not target.is_relative_to(root):
            raise _outside()
        return target

    def relative(self, path: Path) -> str:
        rel = path.relative_to(self.real_root()).as_posix()
        return "" if rel == "." else rel

    def inside(self, path: Path) -> bool:
        """True when ``path`` (possibly a symlink) really lies inside the root."""
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return False
        root = self.real_root()
        return real == root or real.is_relative_to(root)

    def walk(self, top: Path, recursive: bool, deadline: float, clock: Callable[[], float]) -> Walk:
        """Entries under ``top`` in a stable order, bounded (see ``client.tools._walk``)."""
        return Walk(self.real_root(), top, recursive, deadline=deadline, clock=clock)


def _folder(files: FilesRoot, args: Mapping[str, Any]) -> Path:
    top = files.resolve(opt_str(args, "path", "") or "")
    if not top.exists():
        raise not_found("folder")
    if not top.is_dir():
        raise ToolFailure(
            ErrorClass.invalid_arguments, "argument 'path' is not a folder", code="not_a_folder"
        )
    return top


def _snippet(text: str, index: int) -> tuple[int, str]:
    line_no = text.count("\n", 0, index) + 1
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    line = text[start : end if end != -1 else len(text)]
    return line_no, line[:SNIPPET_CHARS]


def files_handlers(
    files: FilesRoot, *, clock: Callable[[], float] = time.monotonic
) -> dict[str, Handler]:
    """The four files tools over ``files`` (without the app check); ``clock`` times the walks."""

    def list_files(args: Mapping[str, Any]) -> Any:
        top = _folder(files, args)
        limit = opt_int(args, "limit", 200)
        entries: list[dict[str, Any]] = []
        walk = files.walk(top, args.get("recursive") is True, clock() + LIST_DEADLINE_S, clock)
        stopped_by: str | None = None
        for found in walk:
            if len(entries) >= limit:
                stopped_by = "limit"
                break
            entries.append(
                {
                    "path": found.rel,
                    "type": "folder" if found.is_dir else "file",
                    "size": found.size,
                }
            )
        stopped_by = stopped_by or walk.stopped
        result = {
            "entries": entries,
            "count": len(entries),
            "truncated": stopped_by is not None,
            "truncated_by": stopped_by,
        }
        return Reply(result, Outcome.empty) if not entries else result

    def read_file(args: Mapping[str, Any]) -> Any:
        path = files.resolve(str(args["path"]))
        if not path.exists():
            raise not_found("file")
        if path.is_dir():
            raise ToolFailure(
                ErrorClass.invalid_arguments, "argument 'path' is a folder", code="is_a_folder"
            )
        max_bytes = opt_int(args, "max_bytes", 1024 * 1024)
        data, size = read_regular(path, max_bytes, time.monotonic() + READ_DEADLINE_S)
        return {
            "path": files.relative(path),
            "content": data.decode("utf-8", errors="replace"),
            "size": size,
            "truncated": size > len(data),
        }

    def write_file(args: Mapping[str, Any]) -> Any:
        path = files.resolve(str(args["path"]))
        content = str(args["content"])
        if path.is_dir():
            raise ToolFailure(
                ErrorClass.invalid_arguments, "argument 'path' is a folder", code="is_a_folder"
            )
        data = content.encode("utf-8")
        exists = path.exists()
        if exists and args.get("confirm") is not True:
            preview = {
                "preview": True,
                "action": "replace_file",
                "path": files.relative(path),
                "current_size": path.stat().st_size,
                "new_size": len(data),
                "confirm_required": "call again with confirm: true to replace this file",
            }
            return Reply(preview, Outcome.preview)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not files.inside(path.parent):  # a folder swapped for a symlink meanwhile
            raise _outside()
        write_replace(path, data)
        return {"path": files.relative(path), "size": len(data), "replaced": exists}

    def search_files(args: Mapping[str, Any]) -> Any:
        top = _folder(files, args)
        query = str(args["query"])
        needle = query.casefold()
        limit = opt_int(args, "limit", 50)
        matches: list[dict[str, Any]] = []
        deadline = clock() + SEARCH_DEADLINE_S
        walk = files.walk(top, True, deadline, clock)
        root = files.real_root()
        for found in walk:
            if len(matches) >= limit:
                break
            if found.is_dir:
                continue
            path = root / found.rel
            name = found.rel.rsplit("/", 1)[-1]
            if needle in name.casefold():
                matches.append({"path": found.rel, "in": "name", "line": None, "snippet": None})
                continue
            if found.size is None or found.size > SEARCH_CONTENT_LIMIT:
                continue
            try:
                data, _ = read_regular(path, SEARCH_CONTENT_LIMIT, deadline)
            except (OSError, ToolFailure):
                continue
            text = data.decode("utf-8", errors="replace")
            index = text.casefold().find(needle)
            if index >= 0:
                line, snippet = _snippet(text, index)
                matches.append(
                    {"path": found.rel, "in": "content", "line": line, "snippet": snippet}
                )
        timed_out = walk.stopped is not None or clock() >= deadline
        truncated = len(matches) >= limit or timed_out
        result = {"matches": matches, "count": len(matches), "truncated": truncated}
        return Reply(result, Outcome.empty) if not matches else result

    return {
        "list_files": list_files,
        "read_file": read_file,
        "write_file": write_file,
        "search_files": search_files,
    }
