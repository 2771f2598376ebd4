"""A bad settings value is one line naming its variable and the rule, never the value (it may
be a token), for every setting of every service, through the real commands."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsError
from typer.testing import CliRunner

from cloudskills.settings import SkillsSettings
from collector.settings import CollectorSettings
from lmcp.cli import app
from service.settings import SettingsProblem, load_settings
from tests._servers import run_child

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()
#: Values tried until one is refused; each carries the canary, which no message may repeat.
CANDIDATES = ("canary-7731", "-7731", "[canary-7731", '{"canary-7731": 1}', "97731.5")


def _variable(cls: type[BaseSettings], field: str) -> str:
    return f"{cls.model_config['env_prefix']}{field}".upper()


def _refused(cls: type[BaseSettings], field: str) -> str | None:
    """A value of ``field``'s variable that ``cls`` refuses, or None (any text is valid)."""
    variable = _variable(cls, field)
    saved = os.environ.pop(variable, None)
    try:
        for value in CANDIDATES:
            os.environ[variable] = value
            try:
                cls()
            except (ValidationError, SettingsError):
                return value
        return None
    finally:
        os.environ.pop(variable, None)
        if saved is not None:
            os.environ[variable] = saved


SERVICES: list[tuple[type[BaseSettings], list[str]]] = [
    (CollectorSettings, ["collector", "migrate"]),
    (SkillsSettings, ["skills", "migrate"]),
]
#: Every setting some value can break (a free text such as a host name has none), with one.
CASES = [
    (cls, command, field, bad)
    for cls, command in SERVICES
    for field in cls.model_fields
    if field != "db_path"  # every value is a path; the commands below pass --db
    and (bad := _refused(cls, field)) is not None
]


@pytest.mark.parametrize(
    ("cls", "command", "field", "bad"), CASES, ids=[f"{c.__name__}.{f}" for c, _, f, _ in CASES]
)
def test_a_bad_value_is_one_line_naming_its_variable(
    cls: type[BaseSettings], command: list[str], field: str, bad: str, tmp_path: Path
) -> None:
    variable = _variable(cls, field)
    result = runner.invoke(app, [*command, "--db", str(tmp_path / "x.duckdb")], env={variable: bad})
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: ") and variable in lines[0]
    assert "7731" not in lines[0]  # never the value
    assert not (tmp_path / "x.duckdb").exists()  # refused before anything was done


def test_a_bad_json_list_says_it_must_be_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMCP_COLLECTOR_READ_TOKENS", "secret-token-not-json")
    with pytest.raises(SettingsProblem) as caught:
        load_settings(CollectorSettings)
    text = str(caught.value)
    assert text.startswith("LMCP_COLLECTOR_READ_TOKENS must be a JSON list")
    assert "secret-token-not-json" not in text


def test_a_key_the_user_chose_is_not_repeated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMCP_COLLECTOR_STEWARD_TOKENS", '[{"label": "a", "canary-7731": "x"}]')
    with pytest.raises(SettingsProblem) as caught:
        load_settings(CollectorSettings)
    assert "LMCP_COLLECTOR_STEWARD_TOKENS[0]" in str(caught.value)
    assert "canary" not in str(caught.value)


def test_a_bad_command_line_value_names_the_option() -> None:
    with pytest.raises(SettingsProblem) as caught:
        load_settings(CollectorSettings, port=0)
    assert "command-line option for port" in str(caught.value)


def _serve(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_child([sys.executable, "-m", "lmcp", *args], env={"PATH": os.environ["PATH"], **env})


@pytest.mark.slow  # the real entry point
def test_serve_with_tokens_that_are_not_a_json_list_is_one_line(tmp_path: Path) -> None:
    done = _serve(
        ["collector", "serve", "--db", str(tmp_path / "c.duckdb"), "--port", "1"],
        {"LMCP_COLLECTOR_READ_TOKENS": "abc"},
    )
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert "LMCP_COLLECTOR_READ_TOKENS" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow  # the real entry point, against a real listening socket
@pytest.mark.parametrize("service", ["collector", "skills"])
def test_a_port_in_use_is_one_line(service: str, tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve(
            [service, "serve", "--port", str(port), "--db", str(tmp_path / "s.duckdb")], {}
        )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"127.0.0.1:{port} is already in use" in lines[0]
