"""How a cost grows, measured so that a busy machine cannot fail it: ``growth``.

A test that guards complexity (a scanner must be linear) compares the same work at two sizes,
side by side, in CPU time of the calling thread (``time.thread_time``): waiting for a core on
a loaded machine adds wall-clock time, not CPU time, and both sizes are measured the same way
and at the same moment. Linear work grows about as much as the input; quadratic work grows
with its square, so ``FACTOR`` sizes apart the two are ``FACTOR`` against ``FACTOR ** 2``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["FACTOR", "LINEAR_GROWTH", "cpu_seconds", "growth"]

#: The larger input is this many times the smaller one.
FACTOR = 4
#: The most a linear cost may grow over ``FACTOR`` (noise and cache effects included); a
#: quadratic one grows ``FACTOR ** 2`` = 16 times.
LINEAR_GROWTH = 2.0 * FACTOR


def cpu_seconds(work: Callable[[], object], repeats: int = 3) -> float:
    """The least CPU time of ``repeats`` runs of ``work`` on this thread (the least: whatever
    disturbed a run only ever added to it)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.thread_time()
        work()
        best = min(best, time.thread_time() - started)
    return best


def growth(small: Callable[[], object], large: Callable[[], object], repeats: int = 3) -> float:
    """How many times ``large`` costs ``small`` (each measured ``repeats`` times, alternately,
    so a disturbance falls on both)."""
    small_s = large_s = float("inf")
    for _ in range(repeats):
        small_s = min(small_s, cpu_seconds(small, 1))
        large_s = min(large_s, cpu_seconds(large, 1))
    return large_s / max(small_s, 1e-6)
