"""Attack: one person makes a group appear in what the team sees.

Before: k counted signals, not people. One user who reported the same failure five times filled
a k = 5 group alone, and every view filtered to it described that one person. Now the team sees
releases only: a cell appears only if its noisy count clears a threshold chosen so that the
chance an installation's own cells appear is at most the cube's share of delta.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from collector.releases.cubes import CUBES
from collector.releases.mechanism import release_counts
from collector.releases.store import PrivacyParams
from collector.settings import CollectorSettings
from privacy_tests._release_world import D0, fleet_day, one_signal, write_days
from tests._servers import HANG_S, running_collector

TEAM = "team-token-for-the-group-attack"
TRIALS = 2_000


def test_five_reports_of_one_failure_no_longer_make_a_group(tmp_path: Path) -> None:
    """The issue's attack, through the real collector at the default epsilon: a rare failure
    reported five times by one user, among a day of ordinary traffic."""
    db = tmp_path / "signals.duckdb"
    lone = [one_signal(D0, "recipe_export", "conflict", "task_abandoned") for _ in range(5)]
    write_days(db, [(D0, fleet_day(D0, 3_000, seed=1) + lone)])
    settings = CollectorSettings(
        db_path=db, read_tokens=[SecretStr(TEAM)], retention_days=36500, rate_limit_enabled=False
    )
    with running_collector(settings) as url, httpx.Client(base_url=url, timeout=HANG_S) as http:
        auth = {"Authorization": f"Bearer {TEAM}"}
        day = {"start": D0.isoformat(), "end": D0.isoformat(), "limit": "1000"}
        mine = http.get("/v1/triage/top", params={**day, "tool": "recipe_export"}, headers=auth)
        assert mine.status_code == 200, mine.text
        assert mine.json()["rows"] == [], "one user's failure is visible to the team"
        everyone = http.get("/v1/triage/top", params=day, headers=auth).json()["rows"]
        assert everyone, "the common failures of the same day are released (not vacuous)"
        for question in ("platforms", "apps", "intents", "ring", "shapes", "regressions"):
            body = http.get(f"/v1/triage/{question}", params=day, headers=auth).json()
            assert all("recipe_export" not in str(r.values()) for r in body["rows"]), question


@pytest.mark.parametrize("cube", sorted(CUBES))
def test_the_threshold_bounds_the_chance_that_one_installation_shows(cube: str) -> None:
    """Deterministic: with the published scale b and threshold tau, the cells one installation
    fills alone (at most l0 cells, each at most linf) clear tau with probability at most
    about l0 * exp(-(tau - linf) / b) / 2 (the continuous Laplace tail; OpenDP's discrete
    noise and its own map agree within 1 %), which is within the cube's delta."""
    params = PrivacyParams()
    cal = params.calibration(cube)
    b = cal.bounds
    assert cal.scale == pytest.approx(b.l1 / (params.epsilon_per_day * params.split[cube]))
    chance = b.l0 * 0.5 * math.exp(-(cal.threshold - b.linf) / cal.scale)
    assert chance <= params.delta_per_day * params.split[cube] * 1.01
    assert cal.delta <= params.delta_per_day * params.split[cube]


@pytest.mark.slow
@pytest.mark.parametrize("cube", sorted(CUBES))
def test_one_installations_cells_are_never_released_in_many_draws(cube: str) -> None:
    """Statistical: the real OpenDP mechanism, drawn TRIALS times over the worst case one
    installation can make alone. Expected releases: TRIALS * delta, far below one."""
    cal = PrivacyParams().calibration(cube)
    alone: dict[tuple[str, ...], int] = {
        (f"cell-{i}",): cal.bounds.linf for i in range(cal.bounds.l0)
    }
    released = sum([len(release_counts(alone, cal)) for _ in range(TRIALS)])
    assert released == 0
    crowd: dict[tuple[str, ...], int] = {("crowd",): cal.threshold + int(6 * cal.scale)}
    shown = sum([len(release_counts(crowd, cal)) for _ in range(200)])
    assert shown >= 190, "a cell well above the threshold is released (not vacuous)"


def test_a_cube_bound_cannot_be_loosened_by_the_split() -> None:
    """The split spends the daily epsilon, it never adds to it."""
    params = PrivacyParams()
    total = sum(params.calibration(c).epsilon for c in CUBES)
    assert total <= params.epsilon_per_day * (1 + 1e-9)
    with pytest.raises(ValueError):
        dataclasses.replace(params, split={**params.split, "friction": 0.9})
