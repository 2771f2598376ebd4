"""``lmcp recipes list|show|run|export|import|delete`` through typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from client.paths import LmcpHome
from lmcp.cli import app
from tests.recipes.conftest import make_host

pytestmark = pytest.mark.slow  # every test here starts a process

runner = CliRunner()


@pytest.fixture
def cli_home(home: LmcpHome, monkeypatch: pytest.MonkeyPatch) -> LmcpHome:
    monkeypatch.setenv("LMCP_HOME", str(home.root))
    monkeypatch.setenv("LMCP_COLLECTOR_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("DO_NOT_TRACK", "1")
    host = make_host(home)
    host.dispatch(
        "recipe_save",
        {
            "manifest": {
                "name": "Brief",
                "params": [
                    {"name": "n", "type": "int", "default": 1},
                    {"name": "loud", "type": "bool", "default": False},
                ],
                "steps": [
                    {"tool": "list_notes", "args": {"limit": "${n}"}, "optional": True},
                    {"tool": "get_datetime"},
                ],
            }
        },
    )
    host.dispatch(
        "recipe_save",
        {
            "manifest": {
                "name": "Writer",
                "steps": [{"tool": "create_note", "args": {"note_name": "From CLI"}}],
            }
        },
    )
    return home


def _json(output: str) -> dict[str, object]:
    doc = json.loads(output)
    assert isinstance(doc, dict)
    return doc


def test_list_and_show(cli_home: LmcpHome) -> None:
    listed = runner.invoke(app, ["recipes", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    names = [r["name"] for r in _json(listed.output)["recipes"]]  # type: ignore[attr-defined]
    assert names == ["Brief", "Writer"]
    table = runner.invoke(app, ["recipes", "list"])
    assert "Brief" in table.output and "{" not in table.output
    shown = runner.invoke(app, ["recipes", "show", "brief"])
    assert _json(shown.output)["name"] == "Brief"
    assert runner.invoke(app, ["recipes", "show", "nope"]).exit_code == 1


def test_run_with_typed_params(cli_home: LmcpHome) -> None:
    ran = runner.invoke(app, ["recipes", "run", "Brief", "-p", "n=2", "-p", "loud=true", "--json"])
    assert ran.exit_code == 0, ran.output
    assert _json(ran.output)["ok"] is True
    bad = runner.invoke(app, ["recipes", "run", "Brief", "-p", "n=01"])
    assert bad.exit_code != 0
    as_json = runner.invoke(app, ["recipes", "run", "Brief", "--params-json", '{"n": 1.0}'])
    assert as_json.exit_code == 1 and "invalid_param" in as_json.output


def test_a_state_changing_run_needs_yes(cli_home: LmcpHome) -> None:
    planned = runner.invoke(app, ["recipes", "run", "Writer", "--json"])
    assert planned.exit_code == 0 and '"preview": true' in planned.output
    assert not any(cli_home.notes.glob("*.json"))
    done = runner.invoke(app, ["recipes", "run", "Writer", "--yes"])
    assert done.exit_code == 0 and any(cli_home.notes.glob("*.json"))


def test_export_import_delete(cli_home: LmcpHome, tmp_path: Path) -> None:
    target = tmp_path / "brief.lmcp-recipe.json"
    exported = runner.invoke(app, ["recipes", "export", "Brief", "-o", str(target)])
    assert exported.exit_code == 0, exported.output
    assert json.loads(target.read_text("utf-8"))["format"] == "lmcp-recipe"
    assert runner.invoke(app, ["recipes", "delete", "Brief"]).exit_code == 0  # asks: not deleted
    assert runner.invoke(app, ["recipes", "import", str(target)]).exit_code == 1  # exists
    assert runner.invoke(app, ["recipes", "delete", "Brief", "--yes"]).exit_code == 0
    assert runner.invoke(app, ["recipes", "import", str(target)]).exit_code == 0
    assert runner.invoke(app, ["recipes", "import", str(tmp_path / "none.json")]).exit_code == 1


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["-p", "nope=1"], "no param 'nope' (it takes: 'n', 'loud')"),
        (["-p", "n=2", "-p", "nope=1", "-p", "zz=3"], "no params 'nope', 'zz'"),
        (["--params-json", '{"nope": 1}'], "no param 'nope'"),
    ],
)
def test_an_undeclared_param_is_named_with_those_the_recipe_takes(
    cli_home: LmcpHome, args: list[str], named: str
) -> None:
    result = runner.invoke(app, ["recipes", "run", "Brief", *args])
    assert result.exit_code == 2  # a usage error: nothing ran
    assert named in " ".join(result.output.split())
    assert runner.invoke(app, ["recipes", "run", "Writer", "-p", "x=1"]).exit_code == 2
