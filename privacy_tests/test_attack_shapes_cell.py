"""Attack: a modified client adds more than 1 to a cell of the shapes cube with one signal.

The shapes cube (``collector/releases/cubes.py``) counts each argument shape of a signal in
the cell (tool, argument name, type, size), and its noise is calibrated on one signal adding
at most 1 to any cell: argument names are distinct within a signal. A client that writes its
own bodies (bypassing ``client/capture.py``) could repeat one name -- four identical shapes
would add 4 to one cell -- or name arguments its tool does not declare. Against a real
collector on loopback, for every tool: each name it may carry repeated four times, a name it
does not declare, in v2 and in v1 signals, each alone in its batch (the most a modified client
can get stored), ``other`` among them: four identical undeclared shapes, as a v1 client did
send them. Then, over everything stored, the shapes cube's own per-signal cells
(``cube_rows_sql``): no signal is in any cell more than once.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import httpx
from pydantic import SecretStr

from collector.releases.cubes import CUBES, cube_rows_sql
from collector.settings import CollectorSettings
from contract.catalogue import load_catalogue
from contract.schema import ArgName, ToolName
from tests._servers import HANG_S, running_collector
from tests.factories import BARE, TODAY, signal_json

CARRIED = load_catalogue().signal_arg_names()


def _shape(name: str) -> dict[str, Any]:
    return {"name": name, "type": "string", "size": "1-16"}


def _signal(tool: str, args: list[dict[str, Any]], version: int) -> dict[str, Any]:
    doc = signal_json(**BARE, tool_attempted=tool)
    doc["args"] = args
    if version == 1:
        del doc["attempts"]
        doc["schema_version"] = 1
    return doc


def _forged() -> list[dict[str, Any]]:
    """Every attack, one signal each."""
    out = []
    for tool in ToolName:
        carried = CARRIED[tool.value]
        undeclared = min(set(ArgName) - carried)
        for version in (1, 2):
            # ``other`` among them: four undeclared keys of one shape, as a v1 client sent
            # them, are stored folded into one shape (v2 refuses them).
            out += [_signal(tool, [_shape(name)] * 4, version) for name in sorted(carried)]
            out.append(_signal(tool, [_shape(undeclared)], version))
    return out


def test_one_signal_adds_at_most_one_to_any_shapes_cell(tmp_path: Path) -> None:
    settings = CollectorSettings(
        db_path=tmp_path / "signals.duckdb",
        read_tokens=[SecretStr("attack-shapes-token")],
        rate_limit_enabled=False,
    )
    attacks = _forged()
    with (
        running_collector(settings) as url,
        httpx.Client(base_url=url, trust_env=False, timeout=HANG_S) as http,
    ):
        answers = Counter(
            http.post("/v1/signals", json={"signals": [doc]}).status_code for doc in attacks
        )
    cube = CUBES["shapes"]
    week = {"start": TODAY - dt.timedelta(days=7), "end": TODAY + dt.timedelta(days=1)}
    with duckdb.connect(str(settings.db_path), read_only=True) as con:
        rows = con.execute(cube_rows_sql(cube), week).fetchall()
    per_signal_cell = Counter(tuple(row) for row in rows)
    assert max(per_signal_cell.values()) == 1  # no signal in any cell more than once
    # Every forged signal refused but the v1 ones with four ``other`` shapes, one per tool:
    # each stored as the one ``other`` shape a v2 client builds.
    folded = len(ToolName)
    assert answers == {422: len(attacks) - folded, 200: folded}
    assert len(per_signal_cell) == folded
    assert {row[:-1] for row in rows} == {(t.value, "other", "object", "1-16") for t in ToolName}
