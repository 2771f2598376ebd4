"""The published privacy parameters are the enforced ones: ``lmcp signals catalogue`` (rich,
``--markdown``, ``--json``) prints the weekly contribution bound, rho and its split, each
cube's bounds, noise scale and threshold, the 90-day guarantee and the roles, and every figure
equals what the code enforces (the client's bound, the collector's default settings, the
accountant and OpenDP's calibration); docs/data-catalogue.md and docs/privacy.md say the same."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collector.releases.cubes import CUBES
from collector.releases.store import calibration
from collector.settings import CollectorSettings
from contract.accountant import DEFAULT_SPLIT, ReleasePlan
from contract.limits import PER_KEY_WEEKLY_LIMIT, WEEKLY_SIGNAL_LIMIT
from lmcp.cli import app

DOCS = Path(__file__).resolve().parent.parent / "docs"
runner = CliRunner()


def _catalogue(*args: str) -> str:
    result = runner.invoke(app, ["signals", "catalogue", *args], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def printed(catalogue_command: object) -> dict[str, object]:
    doc = json.loads(_catalogue("--json"))
    privacy = doc["privacy"]
    assert isinstance(privacy, dict)
    return privacy


def test_json_prints_the_enforced_contribution_bound_and_budget(printed: dict[str, object]) -> None:
    defaults = CollectorSettings()
    assert printed["weekly_signal_limit"] == WEEKLY_SIGNAL_LIMIT
    assert WEEKLY_SIGNAL_LIMIT == defaults.release_contribution_cap
    assert printed["per_key_weekly_limit"] == PER_KEY_WEEKLY_LIMIT == 1
    assert printed["rho"] == defaults.release_rho
    plan = defaults.checked_release_plan()
    long_run = plan.long_run()
    assert printed["long_run"] == {"days": 90, "epsilon": long_run.epsilon, "delta": 1e-07}
    assert long_run.epsilon <= defaults.release_epsilon_ceiling == 8.5
    assert printed["omitted"] == ""


def test_json_prints_every_cube_as_calibrated(printed: dict[str, object]) -> None:
    plan = ReleasePlan()
    cubes = printed["cubes"]
    assert isinstance(cubes, list)
    assert [c["cube"] for c in cubes] == list(CUBES)
    for c in cubes:
        cal = calibration(c["cube"], plan)
        assert c["dims"] == list(CUBES[c["cube"]].dim_names)
        assert c["share"] == DEFAULT_SPLIT[c["cube"]]
        assert (c["rho_per_week"], c["delta"], c["scale"], c["threshold"]) == (
            pytest.approx(cal.rho), cal.delta, cal.scale, cal.threshold
        )  # fmt: skip
        assert (c["l0"], c["linf"], c["l1"]) == (cal.bounds.l0, cal.bounds.linf, cal.bounds.l1)
        assert cal.rho <= plan.cube_rho(c["cube"]) * (1 + 1e-9), "OpenDP's map within the share"
    # The cubes of one week spend rho_week; the 14 weeks 90 days touch spend rho.
    assert sum(c["rho_per_week"] for c in cubes) * plan.weeks == pytest.approx(plan.rho, rel=1e-6)


def test_json_prints_the_roles(printed: dict[str, object]) -> None:
    roles = {r["name"]: r for r in printed["roles"]}  # type: ignore[attr-defined]
    assert set(roles) == {"user", "team", "steward"}
    assert roles["team"]["setting"] == "read_tokens" and "releases only" in roles["team"]["reads"]
    assert roles["steward"]["setting"] == "steward_tokens"
    assert "audited" in roles["steward"]["reads"]


def _md_rows(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| `(\w+)` \|", line)
        if m and m.group(1) in CUBES:
            rows[m.group(1)] = [cell.strip() for cell in line.strip("|").split("|")]
    return rows


def test_markdown_rich_and_docs_show_the_same_figures(printed: dict[str, object]) -> None:
    markdown = _catalogue("--markdown")
    assert markdown == (DOCS / "data-catalogue.md").read_text(encoding="utf-8")
    section = markdown.split("## Privacy parameters", 1)[1].split("## Vocabularies", 1)[0]
    assert f"at most {WEEKLY_SIGNAL_LIMIT} signals per installation per UTC week" in section
    rich = _catalogue()
    rows = _md_rows(section)
    privacy_doc = _md_rows((DOCS / "privacy.md").read_text(encoding="utf-8"))
    for c in printed["cubes"]:  # type: ignore[attr-defined]
        name = c["cube"]
        threshold = str(c["threshold"]) if c["threshold"] else "none (known domain)"
        assert rows[name][-1] == threshold and rows[name][1] == ", ".join(c["dims"])
        assert re.search(rf"{name}\s.*\s{threshold.split()[0]}", rich), f"rich output: {name}"
        # docs/privacy.md's hand-written parameter table agrees with the code.
        assert privacy_doc[name][-1] == threshold, f"docs/privacy.md: {name}'s threshold"
        assert privacy_doc[name][1] == ", ".join(c["dims"]), f"docs/privacy.md: {name}'s dims"
