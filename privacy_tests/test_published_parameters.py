"""The published privacy parameters are the enforced ones: ``lmcp signals catalogue`` (rich,
``--markdown``, ``--json``) prints the contribution bound, epsilon and delta per day and their
split, each cube's bounds, noise scale and threshold, and the roles, and every figure equals
what the code enforces (the client's bound, the collector's default settings, the OpenDP
calibration); docs/data-catalogue.md and the table in docs/privacy.md say the same."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from collector.releases.cubes import CUBES, DEFAULT_SPLIT
from collector.releases.store import PrivacyParams
from collector.settings import CollectorSettings
from contract.limits import DAILY_SIGNAL_LIMIT, PER_KEY_DAILY_LIMIT
from lmcp.cli import app

DOCS = Path(__file__).resolve().parent.parent / "docs"
runner = CliRunner()


def _catalogue(*args: str) -> str:
    result = runner.invoke(app, ["signals", "catalogue", *args], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def printed() -> dict[str, object]:
    doc = json.loads(_catalogue("--json"))
    privacy = doc["privacy"]
    assert isinstance(privacy, dict)
    return privacy


def test_json_prints_the_enforced_contribution_bound_and_budget(printed: dict[str, object]) -> None:
    defaults = CollectorSettings.model_construct()
    assert printed["daily_signal_limit"] == DAILY_SIGNAL_LIMIT == defaults.release_contribution_cap
    assert printed["per_key_daily_limit"] == PER_KEY_DAILY_LIMIT == 1
    assert printed["epsilon_per_day"] == defaults.release_epsilon_per_day
    assert printed["delta_per_day"] == defaults.release_delta_per_day
    assert printed["omitted"] == ""


def test_json_prints_every_cube_as_calibrated(printed: dict[str, object]) -> None:
    params = PrivacyParams(cap=DAILY_SIGNAL_LIMIT)
    cubes = printed["cubes"]
    assert isinstance(cubes, list)
    assert [c["cube"] for c in cubes] == list(CUBES)
    for c in cubes:
        cal = params.calibration(c["cube"])
        assert c["dims"] == list(CUBES[c["cube"]].dim_names)
        assert c["share"] == DEFAULT_SPLIT[c["cube"]]
        assert (c["epsilon"], c["delta"], c["scale"], c["threshold"]) == (
            cal.epsilon, cal.delta, cal.scale, cal.threshold
        )  # fmt: skip
        assert (c["l0"], c["linf"], c["l1"]) == (cal.bounds.l0, cal.bounds.linf, cal.bounds.l1)
        assert cal.delta <= params.delta_per_day * c["share"], "the cube's share of delta holds"
    assert sum(c["epsilon"] for c in cubes) == pytest.approx(params.epsilon_per_day)


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
    assert f"C = {DAILY_SIGNAL_LIMIT} signals" in section
    rich = _catalogue()
    rows = _md_rows(section)
    privacy_doc = _md_rows((DOCS / "privacy.md").read_text(encoding="utf-8"))
    for c in printed["cubes"]:  # type: ignore[attr-defined]
        name, threshold = c["cube"], str(c["threshold"])
        assert rows[name][-1] == threshold and rows[name][1] == ", ".join(c["dims"])
        assert re.search(rf"{name}\s.*\s{threshold}\s", rich), f"rich output: {name}"
        # docs/privacy.md's hand-written parameter table agrees with the code.
        assert privacy_doc[name][-1] == threshold, f"docs/privacy.md: {name}'s threshold"
        assert privacy_doc[name][1] == ", ".join(c["dims"]), f"docs/privacy.md: {name}'s dims"
