"""The dashboard's caches and its start-up drawing: a view is computed again exactly when the
stored releases change; a chart asked for by two threads at once is drawn once; a collector
draws its first view's charts at start, before anyone asks."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
import vl_convert
from pydantic import SecretStr

from analysis import _charts
from analysis._charts import base_spec, clear_chart_cache, spec_svg
from analysis._dashboard import answer_svg, overview_answers
from analysis._filters import Filters
from analysis._prewarm import ViewCache, release_marker
from collector.db import migrate
from collector.releases.cubes import CUBES
from collector.releases.mechanism import Calibration
from collector.releases.store import Draw, store_period
from collector.settings import CollectorSettings
from tests._servers import running_collector, wait_until
from tests.analysis.conftest import TEAM_TOKEN


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(":memory:")
    migrate(connection)
    yield connection
    connection.close()


def _release(con: duckdb.DuckDBPyConnection, day: dt.date) -> None:
    cube = CUBES["intents"]
    cal = Calibration(rho=1.0, delta=0.0, scale=1.0, threshold=0, bounds=cube.bounds(8))
    store_period(con, Draw("intents", day, cal, [(k, 1) for k in cube.cells()]))


def test_a_view_is_computed_again_exactly_when_the_releases_change(
    con: duckdb.DuckDBPyConnection,
) -> None:
    cache: ViewCache[int] = ViewCache(size=2)
    computed: list[str] = []

    def compute(key: str) -> Callable[[object], int]:
        def run(_con: object) -> int:
            computed.append(key)
            return len(computed)

        return run

    monday = dt.date(2026, 3, 2)
    first = cache.get(con, "a", compute("a"))
    assert cache.get(con, "a", compute("a")) == first and computed == ["a"]
    _release(con, monday)  # a new period: every view is stale
    assert release_marker(con)[0] > 0
    assert cache.get(con, "a", compute("a")) != first and computed == ["a", "a"]
    assert cache.get(con, "a", compute("a")) == 2
    con.execute("DELETE FROM release_cells")
    con.execute("DELETE FROM release_periods")  # retention dropped it
    assert cache.get(con, "a", compute("a")) == 3
    cache.get(con, "b", compute("b"))
    cache.get(con, "c", compute("c"))  # the oldest key is forgotten past the size
    assert cache.get(con, "a", compute("a")) == 6 and computed[-1] == "a"


def test_a_chart_asked_by_two_threads_at_once_is_drawn_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: list[int] = []
    real = vl_convert.vegalite_to_svg

    def counting(spec: dict[str, Any]) -> str:
        drawn.append(1)
        return str(real(spec))

    monkeypatch.setattr(vl_convert, "vegalite_to_svg", counting)
    spec = base_spec([{"what": f"bar {i}", "n": i} for i in range(12)], 200)
    spec["mark"] = "bar"
    spec["encoding"] = {"y": {"field": "what", "type": "nominal"},
                        "x": {"field": "n", "type": "quantitative"}}  # fmt: skip
    clear_chart_cache()
    start = threading.Barrier(4)
    out: list[str] = []

    def ask() -> None:
        start.wait()
        out.append(spec_svg(json.loads(json.dumps(spec))))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(drawn) == 1 and len(set(out)) == 1 and out[0].startswith("<svg")


@pytest.mark.slow  # a real collector over the synthetic file, drawing real charts
def test_a_collector_draws_its_first_view_before_anyone_asks(
    synth_path: Path, tmp_path: Path
) -> None:
    with duckdb.connect(str(synth_path), read_only=True) as con:
        view = overview_answers(con, Filters())
    wanted = [a for a in view.answers if a.rows]
    assert len(wanted) >= 5
    db_path = tmp_path / "signals.duckdb"
    shutil.copy(synth_path, db_path)
    settings = CollectorSettings(db_path=db_path, read_tokens=[SecretStr(TEAM_TOKEN)],
                                 retention_days=36500, rate_limit_enabled=False)  # fmt: skip
    clear_chart_cache()
    with running_collector(settings):
        # No request: the collector's own start-up work fills the chart cache.
        wait_until(lambda: len(_charts._SVGS) >= len(wanted), what="the first view's charts")
        drawn = set(_charts._SVGS.values())
        assert all(answer_svg(a) in drawn for a in wanted)
