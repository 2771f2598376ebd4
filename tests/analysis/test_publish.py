"""``lmcp analysis publish``: a static folder of the released views, safe to host publicly.

The folder holds only released figures (the data files are ``ask_released``'s answers; an exact
count that differs from its release is nowhere in it), states the long-run epsilon the code
computes, loads nothing from anywhere (a real Chromium opens it from the disk with every other
request aborted), and a collector's ``--url`` gives the same folder as its ``--db``.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from analysis._filters import Filters
from analysis._questions import DEFAULT_LIMIT, Question
from analysis._released import RELEASED_QUESTIONS, ask, ask_released
from analysis._rows import TopRow, shown_count
from analysis.cli import app
from analysis.report import table_rows
from collector.releases.published import privacy_parameters
from collector.releases.store import release_closed_periods
from contract.accountant import ReleasePlan
from tests._browser import CHROMIUM, CHROMIUM_ARGS
from tests._figures import figures, kind_of
from tests.analysis.conftest import TEAM_TOKEN, day, many, write_signals

runner = CliRunner()


def _publish(*args: str, env: dict[str, str] | None = None) -> str:
    result = runner.invoke(app, ["publish", *args], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def _files(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, synth_path: Path) -> Path:
    """The folder published from the released synthetic file."""
    out = tmp_path_factory.mktemp("public") / "site"
    _publish("--db", str(synth_path), "--out", str(out))
    return out


def _released(con: duckdb.DuckDBPyConnection, q: Question) -> dict[str, object]:
    doc: dict[str, object] = json.loads(
        json.dumps(ask_released(con, q, Filters(), limit=DEFAULT_LIMIT).to_json())
    )
    return doc


def test_the_folder_holds_every_released_view_and_its_data(site: Path, synth_path: Path) -> None:
    with duckdb.connect(str(synth_path), read_only=True) as con:
        expected = {q: _released(con, q) for q in RELEASED_QUESTIONS}
    page = (site / "index.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in page
    for q, doc in expected.items():
        assert f'id="q-{q.value}"' in page
        assert json.loads((site / "data" / f"{q.value}.json").read_text()) == doc
        with (site / "data" / f"{q.value}.csv").open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        released = doc["rows"]
        assert isinstance(released, list)
        assert [(int(r["n"]), int(r["moe"])) for r in rows] == [
            (r["n"], r["moe"]) for r in released
        ]
    assert any(expected[q]["rows"] for q in expected), "the synthetic file has released figures"
    privacy = json.loads((site / "privacy.json").read_text())
    long_run = privacy_parameters().long_run
    assert long_run is not None
    assert privacy["long_run"] == {
        "days": long_run.days,
        "epsilon": long_run.epsilon,
        "delta": long_run.delta,
    }
    index = json.loads((site / "index.json").read_text())
    assert [e["name"] for e in index["questions"]] == [q.value for q in RELEASED_QUESTIONS]
    assert index["released_through"] is not None
    assert f"released through {index['released_through']}" in page


def _figures(name: str, text: str) -> set[float]:
    return figures(kind_of(name), text)


def test_an_exact_count_that_differs_from_its_release_is_nowhere(tmp_path: Path) -> None:
    """Released, then raw rows added to the released week: the exact count (1,317) is far from
    its release (about 200 +- its noise), so a file showing it as a figure leaked a raw one.
    Read as figures (``_figures``), not as text: a coordinate or an id holding the digits by
    chance is no figure."""
    path = tmp_path / "exact.duckdb"
    with duckdb.connect(str(path)) as con:
        write_signals(con, many(200, when=day(2), tool="read_note"))
        write_signals(con, many(40, when=day(3), tool="search_files", error_class="timeout"))
        release_closed_periods(con, day(12), ReleasePlan(), retention_days=14)
        write_signals(con, many(1117, when=day(4), tool="read_note"))
    with duckdb.connect(str(path), read_only=True) as con:
        exact = ask(con, Question.top, Filters(start=day(1), end=day(7)), k=2)
        released = _released(con, Question.top)
    tops = [r for r in exact.rows if isinstance(r, TopRow) and r.tool == "read_note"]
    assert [r.n for r in tops] == [1317], "the exact count"
    out = tmp_path / "site"
    _publish("--db", str(path), "--out", str(out))
    files = _files(out)
    assert json.loads(files["data/top.json"]) == released
    shown = [r for r in released["rows"] if r["tool"] == "read_note"]  # type: ignore[attr-defined]
    assert shown and shown[0]["n"] != 1317
    assert shown[0]["n"] in _figures("data/top.json", files["data/top.json"]), "a figure is read"
    leaked = {name: 1317.0 in _figures(name, text) for name, text in files.items()}
    assert leaked == dict.fromkeys(files, False)
    # The same check sees the exact count where the page shows its release.
    released_cell = f">{shown[0]['n']:,} \u00b1 {shown[0]['moe']:,}"
    assert released_cell in files["index.html"]
    published = files["index.html"].replace(released_cell, ">1,317 \u00b1 0", 1)
    assert 1317.0 in _figures("index.html", published)


def test_it_refuses_exact_and_a_non_empty_folder(synth_path: Path, tmp_path: Path) -> None:
    exact = runner.invoke(
        app, ["publish", "--db", str(synth_path), "--out", str(tmp_path / "x"), "--exact"]
    )
    assert exact.exit_code != 0 and "--exact" in exact.output
    assert not (tmp_path / "x").exists()
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine", encoding="utf-8")
    refused = runner.invoke(app, ["publish", "--db", str(synth_path), "--out", str(busy)])
    assert refused.exit_code != 0 and "--force" in refused.output
    assert sorted(p.name for p in busy.iterdir()) == ["keep.txt"]
    _publish("--db", str(synth_path), "--out", str(busy), "--force")
    assert (busy / "index.html").is_file() and (busy / "keep.txt").read_text() == "mine"


def test_a_collector_url_publishes_the_same_folder_as_its_file(
    collector_url: str, synth_path: Path, site: Path, tmp_path: Path
) -> None:
    remote = tmp_path / "remote"
    _publish("--url", collector_url, "--out", str(remote), env={"LMCP_TEAM_TOKEN": TEAM_TOKEN})
    got, want = _files(remote), _files(site)
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], name
    assert TEAM_TOKEN not in "".join(got.values())


# -- in a real browser, from the disk ------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.mark.browser
@pytest.mark.slow
def test_the_page_opens_from_the_folder_with_no_network(
    chromium: object, site: Path, synth_path: Path
) -> None:
    from playwright.sync_api import Browser, Route

    assert isinstance(chromium, Browser)
    outside: list[str] = []

    def guard(route: Route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:  # the page must need nothing but its own file
            outside.append(route.request.url)
            route.abort()

    context = chromium.new_context()
    page = context.new_page()
    page.route("**/*", guard)
    page.goto((site / "index.html").as_uri())
    page.wait_for_load_state("load")
    with duckdb.connect(str(synth_path), read_only=True) as con:
        answers = [ask_released(con, q, Filters(), limit=DEFAULT_LIMIT) for q in RELEASED_QUESTIONS]
    for answer in answers:
        section = page.locator(f"#q-{answer.question.value}")
        assert section.count() == 1
        if answer.rows:
            first = table_rows(answer)[0]
            cells = section.locator("table").first.locator("tbody tr").first.locator("td")
            assert shown_count(first) in cells.all_inner_texts(), answer.question
            assert "\u00b1" in shown_count(first)
    long_run = privacy_parameters().long_run
    assert long_run is not None
    assert page.locator("#privacy #epsilon").inner_text() == f"{long_run.epsilon:.4g}"
    assert page.locator("#privacy #days").inner_text() == str(long_run.days)
    assert "8" in page.locator("#privacy #bound strong").inner_text()
    context.close()
    assert outside == [], "the page asked for something outside its folder"


def test_a_copy_of_the_folder_keeps_its_links(site: Path, tmp_path: Path) -> None:
    """Hosting is copying the folder: every link of the page is relative and names a file in it."""
    import re

    copy = tmp_path / "hosted"
    shutil.copytree(site, copy)
    page = (copy / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'href="([^"#][^"]*)"', page)
    assert links and all((copy / link).is_file() for link in links), links
    # An SVG's namespace names (xmlns) are identifiers, never fetched; nothing else is absolute.
    absolute = set(re.findall(r"https?://[^\"' )]*", page))
    assert absolute <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, absolute
    assert dt.date.fromisoformat(json.loads((copy / "index.json").read_text())["generated"])
