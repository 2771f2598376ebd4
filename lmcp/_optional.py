"""Parts that need an optional extra (``[mcp]``, ``[collector]``, ``[analysis]``).

Only a missing THIRD-PARTY module means "this extra is not installed": an ImportError raised
by our own packages is a bug and propagates, instead of silently dropping a command or a route.
``absent_module`` is that test, written once; the shell's command groups and
``import_optional`` both ask it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["absent_module", "import_optional"]

#: This distribution's packages (pyproject.toml's wheel ``packages``, which an installed copy
#: cannot read; tests/test_one_package_list.py checks the two agree).
_OWN_PACKAGES = frozenset(
    {"contract", "service", "client", "collector", "cloudskills", "analysis", "lmcp"}
)


def absent_module(exc: ModuleNotFoundError) -> str | None:
    """The third-party module ``exc`` says is missing (an extra not installed), or None when
    the missing module is one of ours (a bug, which must keep its traceback)."""
    if exc.name is None or exc.name.split(".")[0] in _OWN_PACKAGES:
        return None
    return exc.name


def import_optional(module: str) -> ModuleType | None:
    """The module, or None when a dependency from an extra that is not installed is missing."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if absent_module(exc) is None:
            raise
        return None
