"""SQL lives in ``collector/sql/*.sql``, loaded by name; parameters are always bound."""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["load_sql"]

_SQL_DIR = Path(__file__).with_name("sql")


@cache
def load_sql(name: str) -> str:
    """The text of ``collector/sql/<name>.sql``."""
    return (_SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")
