"""``lmcp analysis … --url``: what a collector refuses, the command line says in the collector's
own words (the problem's ``detail``: which filter, and why), against a real collector."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from collector.releases.store import release_closed_periods
from collector.settings import CollectorSettings
from contract.accountant import ReleasePlan
from lmcp.cli import app
from tests._servers import running_collector
from tests.analysis.conftest import TEAM_TOKEN, day, many, write_signals

runner = CliRunner()


@pytest.fixture(scope="module")
def released_collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("problems") / "signals.duckdb"
    with duckdb.connect(str(path)) as con:
        write_signals(con, [s for n in range(1, 8) for s in many(40, when=day(n))])
        release_closed_periods(con, day(12), ReleasePlan(), retention_days=36500)
    settings = CollectorSettings(
        db_path=path, read_tokens=[SecretStr(TEAM_TOKEN)], retention_days=36500
    )
    with running_collector(settings) as url:
        yield url


@pytest.mark.slow  # a real collector
def test_a_refused_filter_is_named_in_the_collectors_words(released_collector: str) -> None:
    result = runner.invoke(
        app,
        ["analysis", "top", "--url", released_collector, "--version", "1.0"],
        env={"LMCP_TEAM_TOKEN": TEAM_TOKEN},
    )
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "HTTP 422 (invalid_filter)" in text
    assert "filter 'version' is not available for top: its release has no version" in text
    assert TEAM_TOKEN not in text


@pytest.mark.slow  # a real collector
def test_a_status_with_our_own_words_keeps_them(released_collector: str) -> None:
    result = runner.invoke(
        app, ["analysis", "top", "--url", released_collector], env={"LMCP_TEAM_TOKEN": "wrong"}
    )
    assert result.exit_code == 1
    assert "the token has no read access" in " ".join(result.output.split())


def test_the_problem_reader_takes_only_strings() -> None:
    from service.problems import problem_of

    assert problem_of(b'{"code": "invalid_filter", "detail": "filter x"}') == (
        "invalid_filter",
        "filter x",
    )
    for body in (b"", b"not json", b"[1]", b'{"code": 3, "detail": {"x": 1}}'):
        assert problem_of(body) == ("error", None)
