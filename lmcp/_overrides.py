"""What a service's command-line options override in its settings (the rest: environment)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["bind_overrides"]


def bind_overrides(
    *, host: str | None = None, port: int | None = None, db: Path | None = None
) -> dict[str, Any]:
    """The settings fields the options ``--host``, ``--port`` and ``--db`` set, when given."""
    given = {"host": host, "port": port, "db_path": db}
    return {name: value for name, value in given.items() if value is not None}
