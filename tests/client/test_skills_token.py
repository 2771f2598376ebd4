"""How the Cloud Skills token is found and handed over (``client.skills._token``): the variable
wins over the file; the file's first line is the token; the re-exec's pipe is read once and
closed; a descriptor that is not the pipe is left alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from client.settings import ClientSettings
from client.skills._token import (
    HANDOVER_VAR,
    TOKEN_FILE_VAR,
    TOKEN_VAR,
    handed_over,
    handed_over_settings,
    token_from,
)

_TOKENS = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=200)


def _token(environ: dict[str, str]) -> str | None:
    """The token the settings ``environ`` configures resolve to."""
    return token_from(ClientSettings.from_env(environ))


def _pipe_holding(data: bytes) -> int:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    return read_end


@given(_TOKENS)
def test_the_handed_over_pipe_gives_the_token_once_and_is_closed(token: str) -> None:
    fd = _pipe_holding(token.encode())
    env = handed_over({HANDOVER_VAR: str(fd), "LMCP_HOME": "/h"})
    assert env == {TOKEN_VAR: token, "LMCP_HOME": "/h"}
    with pytest.raises(OSError):
        os.fstat(fd)


def test_a_descriptor_that_is_not_a_pipe_is_left_open(tmp_path: Path) -> None:
    with (tmp_path / "f").open("wb") as handle:
        env = handed_over({HANDOVER_VAR: str(handle.fileno())})
        assert env == {}
        os.fstat(handle.fileno())  # still open


@pytest.mark.parametrize("raw", ["", "x", "0", "1", "2", "-3", "99999"])
def test_a_bad_descriptor_number_gives_no_token(raw: str) -> None:
    assert handed_over({HANDOVER_VAR: raw}) == {}


@given(_TOKENS)
def test_the_token_file_s_first_line_is_the_token(token: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "token"
        path.write_text(f"{token}\nsecond line\n")
        assert _token({TOKEN_FILE_VAR: str(path)}) == token
        assert _token({TOKEN_FILE_VAR: str(path), TOKEN_VAR: "wins"}) == "wins"


def test_a_missing_or_empty_token_file_gives_no_token(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("\n")
    assert _token({TOKEN_FILE_VAR: str(tmp_path / "empty")}) is None
    assert _token({TOKEN_FILE_VAR: str(tmp_path / "missing")}) is None
    assert _token({}) is None


def test_lmcp_mcp_s_settings_hold_the_handed_over_token_and_the_environ_loses_the_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fd = _pipe_holding(b"handed-over-token")
    monkeypatch.setenv(HANDOVER_VAR, str(fd))
    monkeypatch.delenv(TOKEN_VAR, raising=False)
    settings = handed_over_settings()
    assert settings.skills_token == "handed-over-token"
    # A child started with this process's environment never finds the (closed) descriptor.
    assert HANDOVER_VAR not in os.environ
    assert "handed-over-token" not in repr(settings)
