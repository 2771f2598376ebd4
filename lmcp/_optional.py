"""Import a part that needs an optional extra (``[collector]``, ``[analysis]``, ``[mcp]``).

Only a missing THIRD-PARTY module means "this extra is not installed": an ImportError raised
by our own packages is a bug and propagates, instead of silently dropping a command or a route.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["import_optional"]

_OWN_PACKAGES = frozenset(
    {"contract", "service", "client", "collector", "cloudskills", "analysis", "lmcp"}
)


def import_optional(module: str) -> ModuleType | None:
    """The module, or None when a dependency from an extra that is not installed is missing."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] in _OWN_PACKAGES:
            raise
        return None
