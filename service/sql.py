"""SQL lives in ``.sql`` files beside the code that runs it, loaded by folder and name.

Parameters are always bound, never formatted into the text. A name is a plain identifier, so a
name can never walk out of its folder.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

__all__ = ["load_sql"]

_NAME = re.compile(r"[a-z0-9_]+")


@cache
def load_sql(folder: Path, name: str) -> str:
    """The text of ``folder/<name>.sql``; ``KeyError`` for a bad name or a missing file."""
    if not _NAME.fullmatch(name):
        raise KeyError("not a query name")
    path = folder / f"{name}.sql"
    if not path.is_file():
        raise KeyError("no such query")
    return path.read_text(encoding="utf-8")
