"""``lmcp analysis --url`` with no collector there names the URL and the reason, never "the
collector answered 0"."""

from __future__ import annotations

from typer.testing import CliRunner

from lmcp.cli import app
from tests._servers import refused_port


def test_analysis_url_unreachable_names_url_and_reason() -> None:
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}"
        result = CliRunner().invoke(app, ["analysis", "top", "--url", url, "--token", "t" * 32])
    assert result.exit_code == 1
    assert url in result.output and "connection refused" in result.output
    assert "answered 0" not in result.output
