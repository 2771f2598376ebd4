"""Recipes: ``recipe_run``'s own overhead per step, and validating + saving a 50-step recipe.

Targets (issue 4): run overhead per step, excluding the tool's own work, <= 50 us median;
validating and saving a 50-step recipe <= 10 ms median.

The run overhead is measured as (a recipe of N steps through ``run_recipe``) / N minus one
``host.dispatch`` of the same call: what is left is the runner's work per step (interpolating
``${...}`` in the args, the record of the step, the bookkeeping). The host's own dispatch
(argument validation, ring) is printed beside it for reference; the tool is a no-op.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._timing import median, table, verdict
from client.host import ToolHost
from client.recipes import Manifest, ManifestChecker, Param, RecipeStore, ToolStep, run_recipe
from contract.catalogue import load_catalogue

STEPS = 50
REPEAT = 21


def _noop(args: Any) -> dict[str, int]:
    return {"count": 0}


def _manifest_json(steps: int) -> dict[str, Any]:
    out: list[dict[str, Any]] = [{"tool": "list_notes", "args": {"limit": "${n}"}}]
    for i in range(1, steps):
        out.append(
            {
                "tool": "list_notes",
                "args": {"limit": "${steps[" + str(i - 1) + "].result.count}", "folder": "f ${n}"},
                "optional": i % 7 == 0,
            }
        )
    return {
        "name": "Benchmark recipe",
        "params": [{"name": "n", "type": "int", "default": 5}],
        "steps": out,
    }


def _per_call_us(fn: Any, number: int) -> float:
    runs = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        runs.append((time.perf_counter() - start) / number * 1e6)
    return median(runs)


def run() -> None:
    catalogue = load_catalogue()
    host = ToolHost({"list_notes": _noop}, catalogue=catalogue)

    # 1. run overhead per step: a 50-step recipe whose steps interpolate a param.
    steps = tuple(
        ToolStep("list_notes", {"limit": "${n}", "folder": "f ${n}"}) for _ in range(STEPS)
    )
    manifest = Manifest("bench", steps, params=(Param("n", "int", True, 5),))
    direct_args = {"limit": 5, "folder": "f 5"}
    runs, dispatches = [], []
    for _ in range(5):  # interleaved, so both see the same machine
        runs.append(_per_call_us(lambda: run_recipe(manifest, host), 20) / STEPS)
        dispatches.append(_per_call_us(lambda: host.dispatch("list_notes", direct_args), 1000))
    per_step, dispatch = median(runs), median(dispatches)
    overhead = per_step - dispatch

    # 2. validate + save a 50-step recipe (atomic replace, fsync included).
    checker = ManifestChecker(catalogue)
    raw = _manifest_json(STEPS)
    with tempfile.TemporaryDirectory() as tmp:
        store = RecipeStore(Path(tmp) / "recipes")

        names = iter(range(10**9))

        def save_new() -> None:
            fresh = dict(raw, name=f"Benchmark recipe {next(names)}")
            assert store.save(checker.check(fresh).manifest, overwrite=False) is False

        def save_over() -> None:
            store.save(checker.check(raw).manifest, overwrite=True)

        save_ms = _per_call_us(save_new, 10) / 1000
        over_ms = _per_call_us(save_over, 10) / 1000
        check_ms = _per_call_us(lambda: checker.check(raw), 20) / 1000

    table(
        "recipes",
        ["measure", "median", "target", "verdict"],
        [
            [
                "recipe_run overhead per step (excl. tool + dispatch)",
                f"{overhead:.1f} us",
                "<= 50 us",
                verdict(overhead <= 50),
            ],
            ["  recipe_run per step, total", f"{per_step:.1f} us", "", ""],
            ["  host.dispatch of the same call", f"{dispatch:.1f} us", "", ""],
            [
                f"validate + save a {STEPS}-step recipe",
                f"{save_ms:.2f} ms",
                "<= 10 ms",
                verdict(save_ms <= 10),
            ],
            ["  of which validation", f"{check_ms:.2f} ms", "", ""],
            [f"  overwrite an existing {STEPS}-step recipe", f"{over_ms:.2f} ms", "", ""],
        ],
    )


if __name__ == "__main__":
    run()
