"""``lmcp collector serve`` says at start-up where its data goes, where the dashboard is and
whether anyone can read it, and never prints a token."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from collector.settings import CollectorSettings
from lmcp.collector_cli import startup_lines


def test_startup_lines_without_a_read_token_say_everyone_is_refused(tmp_path: Path) -> None:
    lines = "\n".join(startup_lines(CollectorSettings(db_path=tmp_path / "s.duckdb", port=9876)))
    assert str(tmp_path / "s.duckdb") in lines
    assert "http://127.0.0.1:9876/dashboard" in lines
    assert "no read token" in lines and "refuse everyone" in lines


def test_startup_lines_count_tokens_and_never_print_one(tmp_path: Path) -> None:
    secret = "tok-" + "z" * 30
    settings = CollectorSettings(db_path=tmp_path / "s.duckdb", read_tokens=[SecretStr(secret)])
    lines = "\n".join(startup_lines(settings))
    assert "1 read token(s) set" in lines and secret not in lines
