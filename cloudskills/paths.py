"""Component ``logical_path`` rules: a relative, portable POSIX path.

Refused (spec): empty, absolute, traversing (``..``), reserved, duplicated. LMCP also refuses
backslashes, empty or ``.`` segments, characters that are not portable to Windows, and paths
over 512 characters. Duplicates compare case-insensitively after Unicode NFC normalisation, so
no two components can land on one file of a case-insensitive file system.
"""

from __future__ import annotations

import re
import unicodedata

from cloudskills.limits import MAX_PATH_CHARS, ROOT_PATH

__all__ = ["RESERVED_TOP_LEVEL", "path_key", "path_problem"]

#: Top-level names the root of a skill uses itself.
RESERVED_TOP_LEVEL: frozenset[str] = frozenset({ROOT_PATH.casefold(), "manifest.json"})
#: Windows device names: reserved as a segment whatever the extension.
_DEVICE_NAMES: frozenset[str] = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)
_UNPORTABLE = re.compile(r'[\x00-\x1f\x7f<>:"|?*]')
_DRIVE = re.compile(r"^[A-Za-z]:")


def path_key(path: str) -> str:
    """The key two paths collide on (case-insensitive, Unicode-normalised)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", path).casefold())


def path_problem(path: str) -> str | None:
    """``None`` when ``path`` is an acceptable logical path, else the code of the rule it breaks."""
    if path == "":
        return "path_empty"
    if len(path) > MAX_PATH_CHARS:
        return "path_too_long"
    if "\\" in path:
        return "path_backslash"
    if path.startswith("/") or _DRIVE.match(path):
        return "path_absolute"
    segments = path.split("/")
    if ".." in segments:
        return "path_traversal"
    if any(segment in ("", ".") for segment in segments):
        return "path_not_normalized"
    for segment in segments:
        if _UNPORTABLE.search(segment) or segment[-1] in ". ":
            return "path_not_portable"
    if path_key(path) in RESERVED_TOP_LEVEL:
        return "path_reserved"
    for segment in segments:
        if segment.split(".", 1)[0].casefold() in _DEVICE_NAMES:
            return "path_reserved"
    return None
