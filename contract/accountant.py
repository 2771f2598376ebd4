"""The one privacy accountant: from the release parameters, each cube's share of rho per
period and the guarantee over the retention window.

The unit of privacy is one installation. It sends at most ``cap`` signals per UTC week and one
per (tool, error class, friction type) per week (``contract.limits``); every released cube is
a Gaussian mechanism (zCDP) on counts over a known domain, so one installation's week costs
``rho_week`` in all, split between the cubes (``split``). A daily cube's seven days are one
vector of that week with the same bound, so they cost its share once, not seven times.

Over any ``window_days`` window an installation's signals fall in at most ``weeks_in_window``
weeks: zCDP composes by addition, so the window costs ``rho``, converted to (epsilon, delta)
with OpenDP's own map; the one thresholded cube (``ring3``, too large a domain to enumerate)
adds its delta per week. ``long_run()`` is what `lmcp signals catalogue`, ``GET /v1/triage``
and docs/privacy.md print.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from contract.limits import PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT

__all__ = [
    "DEFAULT_DELTA",
    "DEFAULT_RHO",
    "DEFAULT_SPLIT",
    "DEFAULT_WINDOW_DAYS",
    "THRESHOLD_DELTA_SHARE",
    "LongRun",
    "ReleasePlan",
    "weeks_in_window",
]

#: rho over the window: epsilon ~ 8.4 at delta 1e-7 for an installation active every day.
DEFAULT_RHO = 1.0
DEFAULT_DELTA = 1e-7
DEFAULT_WINDOW_DAYS = 90
#: The part of delta the thresholded cube may spend (the rest is the zCDP conversion's).
THRESHOLD_DELTA_SHARE = 0.1
#: Each cube's share of rho (they sum to 1), tuned with ``make bench BENCH_ARGS=privacy``.
DEFAULT_SPLIT: Mapping[str, float] = {
    "friction": 0.10,
    "daily": 0.12,
    "platforms": 0.04,
    "versions": 0.07,
    "apps": 0.14,
    "intents": 0.04,
    "attempts": 0.03,
    "shapes": 0.24,
    "ring2": 0.08,
    "ring3": 0.14,
}


def weeks_in_window(days: int) -> int:
    """The most UTC weeks ``days`` consecutive days can touch."""
    return (days + 5) // 7 + 1


@dataclass(frozen=True, slots=True)
class LongRun:
    """The guarantee for one installation over ``days`` days (each day active)."""

    days: int
    rho: float
    epsilon: float
    delta: float


@dataclass(frozen=True, slots=True)
class ReleasePlan:
    """The published release parameters, and everything derived from them."""

    rho: float = DEFAULT_RHO
    delta: float = DEFAULT_DELTA
    window_days: int = DEFAULT_WINDOW_DAYS
    cap: int = WEEKLY_SIGNAL_LIMIT
    per_key: int = PER_KEY_WEEKLY_LIMIT
    split_items: tuple[tuple[str, float], ...] = field(
        default_factory=lambda: tuple(sorted(DEFAULT_SPLIT.items()))
    )

    def __post_init__(self) -> None:
        if not (self.rho > 0 and 0 < self.delta < 1 and self.window_days >= 1):
            raise ValueError("rho must be positive, delta in (0, 1), the window at least a day")
        if self.cap < WEEKLY_SIGNAL_LIMIT or self.per_key < PER_KEY_WEEKLY_LIMIT:
            # The clients send up to their bound: assuming less would understate the cost.
            raise ValueError(
                f"the cap must be at least the clients' bound ({WEEKLY_SIGNAL_LIMIT} a week, "
                f"{PER_KEY_WEEKLY_LIMIT} per key)"
            )
        split = dict(self.split_items)
        if set(split) != set(DEFAULT_SPLIT) or any(v <= 0 for v in split.values()):
            raise ValueError(f"the split names every cube ({', '.join(DEFAULT_SPLIT)}) once")
        if abs(sum(split.values()) - 1.0) > 1e-9:
            raise ValueError("the split's shares sum to 1")

    @property
    def split(self) -> dict[str, float]:
        return dict(self.split_items)

    @property
    def weeks(self) -> int:
        return weeks_in_window(self.window_days)

    @property
    def rho_week(self) -> float:
        """What one installation's week costs, all cubes together."""
        return self.rho / self.weeks

    def cube_rho(self, cube: str) -> float:
        """One cube's rho for one week (a daily cube: for its seven days together)."""
        return self.rho_week * self.split[cube]

    def scale(self, cube: str, l2: float) -> float:
        """The Gaussian's standard deviation for a cube of L2 sensitivity ``l2``."""
        return l2 / math.sqrt(2.0 * self.cube_rho(cube))

    @property
    def threshold_delta(self) -> float:
        """The delta the thresholded cube may spend in one week."""
        return self.delta * THRESHOLD_DELTA_SHARE / self.weeks

    def long_run(self) -> LongRun:
        return _long_run(self.rho, self.delta, self.window_days)


@functools.cache
def _long_run(rho: float, delta: float, days: int) -> LongRun:
    """rho over the window converted to epsilon at the delta left after the thresholds."""
    import opendp.prelude as dp  # only the few commands that print the guarantee pay for it

    dp.enable_features("contrib")
    # A Gaussian of scale 1/sqrt(2 rho) on sensitivity 1 costs exactly rho.
    unit = dp.m.make_gaussian(
        dp.atom_domain(T=float, nan=False),
        dp.absolute_distance(T=float),
        scale=1 / math.sqrt(2 * rho),
    )
    curve = dp.c.make_zCDP_to_approxDP(unit).map(1.0)  # type: ignore[no-untyped-call]
    epsilon = float(curve.epsilon(delta * (1 - THRESHOLD_DELTA_SHARE)))
    return LongRun(days=days, rho=rho, epsilon=epsilon, delta=delta)
