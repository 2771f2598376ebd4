"""Storage: one JSON document per recipe, safe file names, atomic writes, damaged files."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from client.paths import LmcpHome
from client.recipes import RecipeStore, recipe_filename
from tests._servers import HANG_S
from tests.recipes.conftest import Call, Save, make_host


def test_one_json_document_per_recipe_named_by_slug_and_hash(save: Save, home: LmcpHome) -> None:
    for name in ("Morning brief", "Résumé / weekly: ../../etc", "日报"):
        assert save({"name": name, "steps": [{"tool": "get_datetime"}]}).ok
    files = sorted(p.name for p in home.recipes.iterdir())
    assert len(files) == 3
    for name in files:
        assert name.endswith(".json") and "/" not in name and ".." not in name
        assert " " not in name and "日报" not in name
    assert recipe_filename("Morning brief").startswith("morning-brief-")
    doc = json.loads((home.recipes / recipe_filename("日报")).read_text("utf-8"))
    assert doc["format"] == "lmcp.recipe" and doc["manifest"]["name"] == "日报"


def test_names_differing_only_in_case_are_one_recipe(save: Save) -> None:
    save({"name": "Brief", "steps": [{"tool": "get_datetime"}]})
    clash = save({"name": "BRIEF", "steps": [{"tool": "get_datetime"}]})
    assert clash.error is not None and clash.error.code == "recipe_exists"


def test_writes_leave_no_temporary_files(save: Save, home: LmcpHome) -> None:
    save({"name": "T", "steps": [{"tool": "get_datetime"}]})
    save({"name": "T", "steps": [{"tool": "list_notes"}]}, overwrite=True)
    save({"name": "T", "steps": [{"tool": "list_notes"}]})
    assert [p.name for p in home.recipes.iterdir()] == [recipe_filename("T")]


def test_a_damaged_file_is_reported_and_never_hides_the_others(
    save: Save, call: Call, home: LmcpHome
) -> None:
    save({"name": "Good one", "steps": [{"tool": "get_datetime"}]})
    save({"name": "Broken one", "steps": [{"tool": "get_datetime"}]})
    broken = home.recipes / recipe_filename("Broken one")
    broken.write_text('{"format": "lmcp.recipe", "manif', "utf-8")
    (home.recipes / "stray-000.json").write_text(
        json.dumps(
            {
                "format": "lmcp.recipe",
                "version": 1,
                "manifest": {"name": "Other", "steps": [{"tool": "x"}]},
            }
        ),
        "utf-8",
    )
    listed = call("recipe_list").result
    assert [r["name"] for r in listed["recipes"]] == ["Good one"]
    assert {d["file"]: d["problem"] for d in listed["damaged"]} == {
        broken.name: "is not valid JSON",
        "stray-000.json": "holds a recipe whose name does not match the file name",
    }
    ran = call("recipe_run", name="Broken one")
    assert ran.error is not None and ran.error.code == "recipe_damaged"
    # a damaged recipe can be deleted (with confirmation), or replaced by a new save
    assert call("recipe_delete", name="Broken one").result["damaged"] is True
    assert call("recipe_delete", name="Broken one", confirm=True).ok
    assert call("recipe_run", name="Good one").ok


def test_delete_asks_confirmation(save: Save, call: Call, home: LmcpHome) -> None:
    save({"name": "Bye", "steps": [{"tool": "get_datetime"}]})
    preview = call("recipe_delete", name="Bye")
    assert preview.result["preview"] is True and preview.result["step_count"] == 1
    assert (home.recipes / recipe_filename("Bye")).exists()
    assert call("recipe_delete", name="Bye", confirm=True).result["deleted"] is True
    assert call("recipe_delete", name="Bye").error.code == "recipe_not_found"  # type: ignore[union-attr]


def _save_in_process(root: str, index: int, barrier: object, out: object) -> None:
    home = LmcpHome(Path(root))
    host = make_host(home)
    barrier.wait()  # type: ignore[attr-defined]
    result = host.dispatch(
        "recipe_save",
        {
            "manifest": {
                "name": "Contested",
                "description": f"writer {index}",
                "steps": [{"tool": "get_datetime"}],
            }
        },
    )
    out.put((index, result.ok, result.error.code if result.error else None))  # type: ignore[attr-defined]


@pytest.mark.slow
def test_twenty_processes_save_one_name_at_once_exactly_one_succeeds(home: LmcpHome) -> None:
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(20), ctx.Queue()
    procs = [
        ctx.Process(target=_save_in_process, args=(str(home.root), i, barrier, out))
        for i in range(20)
    ]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=HANG_S) for _ in procs]
    for proc in procs:
        proc.join(timeout=HANG_S)
        assert proc.exitcode == 0
    winners = [i for i, ok, _ in results if ok]
    assert len(winners) == 1
    assert sorted(code for _, ok, code in results if not ok) == ["recipe_exists"] * 19
    manifest = RecipeStore(home.recipes).load("Contested")
    assert manifest.description == f"writer {winners[0]}"
    assert [p.name for p in home.recipes.iterdir()] == [recipe_filename("Contested")]
