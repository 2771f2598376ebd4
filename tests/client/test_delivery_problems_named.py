"""Delivery problems are named: a mistyped collector URL is flagged by ``status``; ``flush``
with the collector down names the URL and the reason and exits non-zero; a report queued for
either reason says which."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from client.collector_url import url_problem
from client.outbox import Outbox
from client.paths import LmcpHome
from lmcp.cli import app
from tests._servers import refused_port
from tests.factories import make_signal
from tests.hypothesis_profiles import at_most

runner = CliRunner()


@pytest.mark.parametrize(
    "url",
    [
        "127.0.0.1:8765",  # no scheme
        "htp://127.0.0.1:8765",
        "http://127.0.0.1:8765/v1/signals",  # the endpoint, not the base URL
        "http://127.0.0.1:99999",
        "http://",
    ],
)
def test_status_warns_on_a_mistyped_url(url: str, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["signals", "status"], env={"LMCP_HOME": str(tmp_path), "LMCP_COLLECTOR_URL": url}
    )
    assert result.exit_code == 0, result.output
    assert "not a usable collector URL" in result.output


@given(st.sampled_from(["http", "https"]), st.integers(1, 65535), st.sampled_from(["", "/"]))
@settings(max_examples=at_most(50))
def test_a_base_url_is_accepted(scheme: str, port: int, tail: str) -> None:
    assert url_problem(f"{scheme}://127.0.0.1:{port}{tail}") is None


def _queued_home(tmp_path: Path) -> dict[str, str]:
    env = {"LMCP_HOME": str(tmp_path)}
    assert runner.invoke(app, ["signals", "on"], env=env).exit_code == 0
    Outbox(LmcpHome(tmp_path)).add([make_signal()])
    return env


@pytest.mark.slow  # the sender retries within its budget before giving up
def test_flush_with_the_collector_down_names_url_and_reason(tmp_path: Path) -> None:
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}"
        env = {**_queued_home(tmp_path), "LMCP_COLLECTOR_URL": url}
        result = runner.invoke(app, ["signals", "flush"], env=env)
    assert result.exit_code == 1
    assert url in result.output and "connection refused" in result.output
    assert "still queued 1" in result.output


def test_flush_refuses_a_mistyped_url_without_trying(tmp_path: Path) -> None:
    env = {**_queued_home(tmp_path), "LMCP_COLLECTOR_URL": "127.0.0.1:8765"}
    result = runner.invoke(app, ["signals", "flush"], env=env)
    assert result.exit_code == 1 and "must start with http://" in result.output
    assert len(Outbox(LmcpHome(tmp_path))) == 1


def _report(tmp_path: Path, url: str) -> dict[str, object]:
    from client.runtime import Runtime

    env = {"LMCP_HOME": str(tmp_path), "LMCP_COLLECTOR_URL": url}
    assert runner.invoke(app, ["signals", "on"], env=env).exit_code == 0
    with Runtime.from_env(env) as rt:
        reply: dict[str, object] = rt.reporter.report({"friction_type": "other"})
        return reply


def test_report_says_why_it_queued_a_mistyped_url(tmp_path: Path) -> None:
    # The endpoint instead of the base URL: it would have been a 404, and the signal dropped.
    reply = _report(tmp_path, "http://127.0.0.1:8765/v1/signals")
    assert reply == {"sent": False, "queued": True, "reason": "collector_url_invalid"}
    assert len(Outbox(LmcpHome(tmp_path))) == 1  # kept for when the URL is fixed


def test_report_says_why_it_queued_an_unreachable_collector(tmp_path: Path) -> None:
    with refused_port() as port:
        reply = _report(tmp_path, f"http://127.0.0.1:{port}")
    assert reply == {"sent": False, "queued": True, "reason": "collector_not_reached"}
