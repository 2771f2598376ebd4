"""What the collector says about the lake mode outside ``collector.lake``: importable without
the ``[lake]`` extra, so the file mode, the shell and analysis can name a lake error (and
catch it) on an install that has no deltalake.

- ``LAKE_EXTRA``: the one line a lake setting or command answers when deltalake is absent;
- ``lake_extra()``: around an import of ``collector.lake``, turns deltalake's absence (and
  only its absence: any other missing module is a bug) into that line;
- ``MirrorError``: a steward's mirror file cannot be used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from contract.version import install_hint

__all__ = ["LAKE_EXTRA", "MirrorError", "lake_extra"]

LAKE_EXTRA = f"the lake mode needs the [lake] extra: {install_hint('lake')}"


class MirrorError(Exception):
    """A steward's mirror file cannot be used (not a mirror, another lake's, or in use)."""


@contextlib.contextmanager
def lake_extra() -> Iterator[None]:
    """Inside: an import that fails because deltalake is absent raises ``RuntimeError`` with
    ``LAKE_EXTRA``; any other missing module propagates unchanged."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] != "deltalake":
            raise
        raise RuntimeError(LAKE_EXTRA) from None
