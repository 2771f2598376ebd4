"""``lmcp signals`` explains itself: ``on`` says what is sent and how to see it; ``off`` and
``local`` say how many queued signals were discarded; ``signals --help`` names the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from client.outbox import Outbox
from client.paths import LmcpHome
from lmcp.cli import app
from tests.factories import make_signal

runner = CliRunner()


def test_on_says_what_is_sent_and_how_to_see_it(tmp_path: Path) -> None:
    result = runner.invoke(app, ["signals", "on"], env={"LMCP_HOME": str(tmp_path)})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for command in ("lmcp signals preview", "lmcp signals log", "lmcp signals catalogue"):
        assert command in text


@pytest.mark.parametrize("mode", ["off", "local"])
def test_leaving_on_says_how_many_queued_signals_were_discarded(mode: str, tmp_path: Path) -> None:
    env = {"LMCP_HOME": str(tmp_path)}
    runner.invoke(app, ["signals", "on"], env=env)
    Outbox(LmcpHome(tmp_path)).add([make_signal(), make_signal(), make_signal()])
    result = runner.invoke(app, ["signals", mode], env=env)
    assert result.exit_code == 0
    assert "3 queued signal(s) were discarded" in " ".join(result.output.split())


def test_signals_help_names_the_environment() -> None:
    result = runner.invoke(app, ["signals", "--help"])
    text = " ".join(result.output.split())
    for name in ("DO_NOT_TRACK", "LMCP_ANONYMOUS_SIGNALS", "LMCP_HOME", "only turn signals OFF"):
        assert name in text
