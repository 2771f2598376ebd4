"""The noise: OpenDP's Laplace mechanism with a threshold (DP partition selection).

``make_laplace_threshold`` (OpenDP, contrib) adds Laplace noise of scale ``b`` to every count
of a map and drops the keys whose noisy count is below a threshold ``tau``. Its privacy map,
given what one installation-day changes (l0 cells, each by at most linf, l1 in all), answers
(epsilon, delta): epsilon = l1 / b, and delta is the chance that a cell only that
installation made clears ``tau`` (about l0 * exp(-(tau - linf) / b) / 2). We choose
b = l1 / epsilon and the smallest integer tau whose delta stays within the cube's share.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from collector.releases.cubes import Bounds

if TYPE_CHECKING:
    import opendp.prelude as dp

__all__ = ["Calibration", "calibrate", "release_counts"]
_SEP = "\x1f"
_MAX_THRESHOLD = 1 << 30


@dataclass(frozen=True, slots=True)
class Calibration:
    epsilon: float
    delta: float
    scale: float
    threshold: int
    bounds: Bounds


@functools.cache
def _enable_contrib() -> None:
    import opendp.prelude

    opendp.prelude.enable_features("contrib")


def _measurement(scale: float, threshold: int) -> dp.Measurement:
    # OpenDP is imported by the first release drawn: reading stored releases (every triage
    # answer, ``lmcp analysis … --db``) needs none of it.
    import opendp.prelude as dp

    _enable_contrib()
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    metric = dp.l01inf_distance(dp.absolute_distance(T=int))
    return dp.m.make_laplace_threshold(domain, metric, scale=scale, threshold=threshold)


def _privacy(bounds: Bounds, scale: float, threshold: int) -> tuple[float, float]:
    d_in = (bounds.l0, bounds.l1, bounds.linf)
    eps, delta = _measurement(scale, threshold).map(d_in)  # type: ignore[no-untyped-call]
    return float(eps), float(delta)


@functools.cache
def calibrate(bounds: Bounds, epsilon: float, delta: float) -> Calibration:
    """Scale for ``epsilon`` and the smallest threshold whose delta is at most ``delta``."""
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError("epsilon must be positive and delta in (0, 1)")
    scale = bounds.l1 / epsilon
    low, high = bounds.linf, bounds.linf + 1
    while _privacy(bounds, scale, high)[1] > delta:
        low, high = high, high * 2
        if high > _MAX_THRESHOLD:
            raise ValueError("no threshold reaches that delta")
    while high - low > 1:  # invariant: delta(high) <= target < delta(low)
        mid = (low + high) // 2
        if _privacy(bounds, scale, mid)[1] <= delta:
            high = mid
        else:
            low = mid
    eps, got = _privacy(bounds, scale, high)
    return Calibration(epsilon=eps, delta=got, scale=scale, threshold=high, bounds=bounds)


def release_counts(
    counts: Mapping[tuple[str, ...], int], calibration: Calibration
) -> dict[tuple[str, ...], int]:
    """One draw of the mechanism over exact cell counts: noisy counts of the kept cells."""
    if not counts:
        return {}
    meas = _measurement(calibration.scale, calibration.threshold)
    noisy = meas({_SEP.join(key): int(n) for key, n in counts.items()})
    return {tuple(key.split(_SEP)): int(n) for key, n in noisy.items()}
