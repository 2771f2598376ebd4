"""Attack: a stored recipe file edited on disk. ``recipe_run`` re-checks at run time what
``recipe_save`` and ``recipe_import`` check (catalogue tools only, no ``report_friction`` or
``recipe_*`` step, declared params only): the edited recipe is refused, no step runs and nothing
is sent -- with signals ON and a failure waiting to be reported (a ``report_friction`` step
written into the file would otherwise run and send a signal)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from client.errors import ToolFailure
from client.paths import LmcpHome
from client.recipes import parse_manifest, recipe_filename, run_recipe
from client.runtime import Runtime
from contract.schema import Outcome


@pytest.fixture
def signals_on(tmp_path: Path) -> Iterator[tuple[Runtime, list[httpx.Request]]]:
    home = LmcpHome(tmp_path / "lmcp-home").ensure()
    home.settings.write_text(json.dumps({"anonymous_signals": "on"}))
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"accepted": 1, "duplicates": 0})

    rt = Runtime.from_env({"LMCP_HOME": str(home.root)}, transport=httpx.MockTransport(answer))
    yield rt, seen
    rt.close()


def _edit(home: LmcpHome, name: str, change: Callable[[dict[str, Any]], None]) -> None:
    path = home.recipes / recipe_filename(name)
    doc = json.loads(path.read_text("utf-8"))
    change(doc["manifest"])
    path.write_text(json.dumps(doc), "utf-8")


def _add_report_step(manifest: dict[str, Any]) -> None:
    manifest["steps"].append(
        {"tool": "report_friction", "args": {"friction_type": "other", "attempt_count": 7}}
    )


def _add_nested_run(manifest: dict[str, Any]) -> None:
    manifest["steps"].insert(0, {"tool": "recipe_run", "args": {"name": "Brief"}})


def _use_an_undeclared_param(manifest: dict[str, Any]) -> None:
    manifest["steps"][0]["args"] = {"timezone": "${params.where}"}


EDITS = {
    "report_friction step": _add_report_step,
    "nested recipe_run step": _add_nested_run,
    "undeclared param": _use_an_undeclared_param,
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_recipe_file_is_refused_and_sends_nothing(
    signals_on: tuple[Runtime, list[httpx.Request]], edit: str
) -> None:
    rt, seen = signals_on
    host = rt.host
    saved = host.dispatch(
        "recipe_save", {"manifest": {"name": "Brief", "steps": [{"tool": "get_datetime"}]}}
    )
    assert saved.ok, saved
    host.dispatch("read_note", {"note_name": "missing"})  # a failure a report could carry
    _edit(rt.home, "Brief", EDITS[edit])
    ring_before = host.ring.snapshot()
    for confirm in (False, True):
        ran = host.dispatch("recipe_run", {"name": "Brief", "confirm": confirm})
        assert not ran.ok and ran.error is not None
        assert ran.error.code == "invalid_manifest", ran.error
        assert "steps[" in ran.error.message
    assert seen == [], "a request left the machine"
    assert rt.sent_log.entries() == [] and len(rt.outbox) == 0
    assert not rt.home.contributions.exists()  # not even the daily bound was touched
    # No step ran: the ring holds only the refused recipe_run calls since the edit.
    after = host.ring.snapshot()[len(ring_before) :]
    assert {e.tool.value for e in after} <= {"recipe_run"}
    assert all(e.outcome is not Outcome.ok for e in after)


def test_the_control_an_unedited_recipe_runs(
    signals_on: tuple[Runtime, list[httpx.Request]],
) -> None:
    rt, _ = signals_on
    rt.host.dispatch(
        "recipe_save", {"manifest": {"name": "Brief", "steps": [{"tool": "get_datetime"}]}}
    )
    ran = rt.host.dispatch("recipe_run", {"name": "Brief"})
    assert ran.ok and ran.result["ok"] is True


def test_the_runner_itself_refuses_a_report_friction_step(
    signals_on: tuple[Runtime, list[httpx.Request]],
) -> None:
    """Defence in depth: ``run_recipe`` called with an unchecked manifest runs no step."""
    rt, seen = signals_on
    manifest, problems = parse_manifest(
        {
            "name": "Sneaky",
            "steps": [
                {"tool": "get_datetime"},
                {"tool": "report_friction", "args": {"friction_type": "other"}},
            ],
        }
    )
    assert manifest is not None, problems
    with pytest.raises(ToolFailure) as refused:
        run_recipe(manifest, rt.host, confirm=True)
    assert refused.value.code == "invalid_manifest"
    assert seen == [] and rt.host.ring.snapshot() == ()
