"""The noise: OpenDP's Gaussian mechanism (zCDP), on known domains and, for the one cube
without one, with a threshold.

``make_gaussian`` adds discrete Gaussian noise of scale ``sigma`` to every entry of an integer
vector: one per cell of the cube's domain, empty cells included. Its privacy map, given the
vector's L2 sensitivity, answers rho = l2**2 / (2 sigma**2); we take sigma from the accountant
and check the map gives back at most the cube's rho.

``make_gaussian_threshold`` (Rogers 2023) releases a map of counts: noise on every present
key, keys whose noisy count is below ``threshold`` dropped. Its map answers (rho, delta), delta
the chance that cells one installation alone made clear the threshold; we take the smallest
integer threshold whose delta stays within the accountant's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from collector.releases.cubes import Bounds

if TYPE_CHECKING:
    import opendp.prelude as dp

__all__ = ["Calibration", "calibrate", "noisy_map", "noisy_vector"]
_SEP = "\x1f"
_MAX_THRESHOLD = 1 << 40


@dataclass(frozen=True, slots=True)
class Calibration:
    """One cube's noise for one period: its rho, delta (0 without a threshold), sigma and
    threshold (0: a known domain, every cell released)."""

    rho: float
    delta: float
    scale: float
    threshold: int
    bounds: Bounds


@functools.cache
def _enable_contrib() -> None:
    import opendp.prelude

    opendp.prelude.enable_features("contrib")


# OpenDP is imported by the first release drawn: reading stored releases (every triage
# answer, ``lmcp analysis … --db``) needs none of it.
@functools.cache
def _vector(size: int, scale: float) -> dp.Measurement:
    import opendp.prelude as dp

    _enable_contrib()
    domain = dp.vector_domain(dp.atom_domain(T=int), size=size)
    return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale)


@functools.cache
def _thresholded(scale: float, threshold: int) -> dp.Measurement:
    import opendp.prelude as dp

    _enable_contrib()
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    metric = dp.l02inf_distance(dp.absolute_distance(T=int))
    return dp.m.make_gaussian_threshold(domain, metric, scale=scale, threshold=threshold)


def _threshold_map(bounds: Bounds, scale: float, threshold: int) -> tuple[float, float]:
    rho, delta = _thresholded(scale, threshold).map(  # type: ignore[no-untyped-call]
        (bounds.l0, math.ceil(bounds.l2 - 1e-12), bounds.linf)
    )
    return float(rho), float(delta)


@functools.cache
def calibrate(bounds: Bounds, scale: float, rho: float, delta: float | None) -> Calibration:
    """Check ``scale`` costs at most ``rho`` (OpenDP's map) and, with ``delta``, find the
    smallest threshold within it."""
    if delta is None:
        got = float(_vector(1, scale).map(bounds.l2))  # type: ignore[no-untyped-call]
        if got > rho * (1 + 1e-9):
            raise ValueError(f"scale {scale} costs rho {got} > {rho}")
        return Calibration(rho=got, delta=0.0, scale=scale, threshold=0, bounds=bounds)
    low, high = bounds.linf, 2 * bounds.linf + int(scale)
    while _threshold_map(bounds, scale, high)[1] > delta:
        low, high = high, high * 2
        if high > _MAX_THRESHOLD:
            raise ValueError("no threshold reaches that delta")
    while high - low > 1:  # invariant: delta(high) <= target < delta(low)
        mid = (low + high) // 2
        if _threshold_map(bounds, scale, mid)[1] <= delta:
            high = mid
        else:
            low = mid
    got_rho, got_delta = _threshold_map(bounds, scale, high)
    if got_rho > rho * (1 + 1e-9):
        raise ValueError(f"scale {scale} costs rho {got_rho} > {rho}")
    return Calibration(rho=got_rho, delta=got_delta, scale=scale, threshold=high, bounds=bounds)


def noisy_vector(counts: Sequence[int], calibration: Calibration) -> list[int]:
    """One draw of the Gaussian over every cell of a known domain (in the domain's order)."""
    if not counts:
        return []
    return [int(n) for n in _vector(len(counts), calibration.scale)(list(counts))]


def noisy_map(
    counts: Mapping[tuple[str, ...], int], calibration: Calibration
) -> dict[tuple[str, ...], int]:
    """One draw of the thresholded Gaussian over the present cells: the kept cells."""
    if not counts:
        return {}
    meas = _thresholded(calibration.scale, calibration.threshold)
    noisy = meas({_SEP.join(key): int(n) for key, n in counts.items()})
    return {tuple(key.split(_SEP)): int(n) for key, n in noisy.items()}
