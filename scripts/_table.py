"""A plain, aligned table on standard output: what the measuring scripts and the benchmarks
print for people to read (one definition, below both)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["table"]


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print ``rows`` under ``header``, the first column left-aligned, the others right."""
    cells = [list(map(str, header))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = [f"\n== {title}"]
    for n, row in enumerate(cells):
        out.append(
            "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    sys.stdout.write("\n".join(out) + "\n")
    sys.stdout.flush()
