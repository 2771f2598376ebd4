"""Small timing helpers shared by the benchmarks."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

from scripts._table import table

#: ``table`` is the one printer of the measuring scripts, below the benchmarks.
__all__ = ["median", "per_call_ns", "percentile", "table", "verdict"]


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


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"
