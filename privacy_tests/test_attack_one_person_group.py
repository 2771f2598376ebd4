"""Attack: one installation's presence changes what the team sees by more than its bound.

Before: k counted signals, not people (one user filled a k = 5 group alone); then daily
releases with a threshold, whose per-day guarantee a backlog or a late delivery broke. Now each
cube is a Gaussian on a known domain: the test takes, for every cube, the worst contribution one
installation can make in a period (``l0`` cells, ``l∞`` each, ``l1`` in all: the vector of
largest norm) and draws the real OpenDP mechanism many times with and without it. The privacy
loss of each draw -- the log-likelihood ratio of "present" against "absent" -- must average at
most the cube's published rho (zCDP: its mean is exactly l2² / 2σ² for the worst case), and the
rare cells one installation alone makes in ring3 must clear its threshold no more often than its
delta allows.
"""

from __future__ import annotations

import statistics

import pytest

from collector.releases.cubes import CUBES, Bounds
from collector.releases.mechanism import noisy_map, noisy_vector
from collector.releases.store import calibration
from contract.accountant import ReleasePlan

TRIALS = 2_000
PLAN = ReleasePlan()


def _worst(b: Bounds) -> list[int]:
    """The installation's largest-norm contribution: l1 units, at most l∞ a cell, l0 cells."""
    full, rest = divmod(b.l1, b.linf)
    cells = [b.linf] * min(full, b.l0)
    if rest and len(cells) < b.l0:
        cells.append(rest)
    return cells


@pytest.mark.parametrize("cube", sorted(n for n, c in CUBES.items() if not c.thresholded))
def test_presence_moves_the_release_by_at_most_the_published_rho(cube: str) -> None:
    cal = calibration(cube, PLAN)
    d = _worst(cal.bounds)
    assert sum(x * x for x in d) ** 0.5 == pytest.approx(cal.bounds.l2)
    base = [50] * len(d)  # the other installations' counts in those cells
    present = [b + x for b, x in zip(base, d, strict=True)]
    s2 = cal.scale**2
    norm2 = sum(x * x for x in d)

    def loss(draw: list[int]) -> float:
        # log p(draw | present) - log p(draw | absent), for independent Gaussians of std σ.
        return (sum((y - b) * x for y, b, x in zip(draw, base, d, strict=True)) - norm2 / 2) / s2

    # One call draws every trial: the mechanism adds independent noise of scale σ to each
    # entry, so TRIALS copies side by side are TRIALS draws (one call each costs 50x more).
    draws = noisy_vector(present * TRIALS, cal)
    losses = [loss(draws[i : i + len(d)]) for i in range(0, len(draws), len(d))]
    assert len(losses) == TRIALS
    mean = statistics.fmean(losses)
    # zCDP's worst case: the loss is Gaussian, mean l2²/2σ², variance 2 × that.
    expected = norm2 / (2 * s2)
    error = 4 * (2 * expected / TRIALS) ** 0.5
    assert expected <= PLAN.cube_rho(cube) * (1 + 1e-9), "the published rho covers the worst case"
    assert abs(mean - expected) <= error, (mean, expected)
    assert statistics.pvariance(losses) == pytest.approx(2 * expected, rel=0.25)


def test_one_installations_ring3_cells_clear_the_threshold_no_more_than_delta() -> None:
    cal = calibration("ring3", PLAN)
    # Every trial's cells in one map (keys apart per trial): each key's noise and threshold
    # are drawn on their own, so one call is TRIALS draws.
    alone: dict[tuple[str, ...], int] = {
        (f"trial-{t}", f"cell-{i}"): x
        for t in range(TRIALS)
        for i, x in enumerate(_worst(cal.bounds))
    }
    released = len(noisy_map(alone, cal))
    assert cal.delta <= PLAN.threshold_delta
    assert released == 0  # expected TRIALS × delta < 1e-5
    crowd: dict[tuple[str, ...], int] = {
        (f"crowd-{t}",): cal.threshold + int(6 * cal.scale) for t in range(200)
    }
    assert len(noisy_map(crowd, cal)) >= 190, "not vacuous"


def test_the_split_spends_rho_and_never_adds_to_it() -> None:
    total = sum(calibration(c, PLAN).rho for c in CUBES)
    assert total <= PLAN.rho_week * (1 + 1e-9)
    with pytest.raises(ValueError):
        ReleasePlan(split_items=tuple({**PLAN.split, "friction": 0.9}.items()))
