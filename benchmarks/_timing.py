"""Small timing helpers shared by the benchmarks."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence


def per_call_ns(fn: Callable[[], object], *, number: int = 10_000, repeat: int = 15) -> list[float]:
    """Nanoseconds per call, one figure per repeat (``number`` calls each)."""
    out: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(number):
            fn()
        out.append((time.perf_counter_ns() - start) / number)
    return out


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print a plain, aligned table (benchmarks print; they are read by people)."""
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


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"
