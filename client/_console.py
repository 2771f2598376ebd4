"""The rich console every ``lmcp`` command prints with: off a terminal, no column is ever cut.

Rich lays tables out for 80 columns when its output is not a terminal and cuts what does not
fit (``friction_t…``); a pipe or a file gets the whole text instead.
"""

from __future__ import annotations

import sys

from rich.console import Console

__all__ = ["make_console"]

#: Wide enough for any table of the pipeline's (its longest cells are vocabularies).
_PIPE_WIDTH = 100_000


def make_console(*, stderr: bool = False) -> Console:
    """A console for stdout (or stderr): a terminal's width on a terminal, unbounded elsewhere."""
    stream = sys.stderr if stderr else sys.stdout
    terminal = stream.isatty()
    return Console(stderr=stderr, width=None if terminal else _PIPE_WIDTH)
