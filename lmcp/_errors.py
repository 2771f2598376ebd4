"""Ordinary mistakes as one line saying what is wrong and what to do (``lmcp --debug``: traceback).

``one_line`` recognises an exception by its type's name and module, never by importing DuckDB
or Arrow: the error path must not cost ``lmcp --help`` its start-up time. Anything it does not
recognise is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
import re

__all__ = ["one_line"]

_QUOTED = re.compile(r'"([^"]+)"|\'([^\']+)\'')


def _quoted(text: str) -> str:
    match = _QUOTED.search(text)
    return (match.group(1) or match.group(2)) if match else "the file"


def one_line(exc: BaseException) -> str | None:
    """What went wrong and what to do, or None when ``exc`` is not an ordinary mistake."""
    kind = type(exc)
    text = str(exc)
    if kind.__module__.split(".")[0] in {"duckdb", "_duckdb"}:
        return _duckdb(kind.__name__, text)
    if (kind.__module__, kind.__name__) == ("service.settings", "SettingsProblem"):
        return text  # names the variable and the rule, never the value
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return (
            f"{exc.filename} is already in use (another collector or service is listening "
            "there?): stop it, or pass --port (or --host)"
        )
    if isinstance(exc, IsADirectoryError):
        where = exc.filename2 or exc.filename
        return f"{where} is a folder where a file is expected: remove or rename it"
    if isinstance(exc, FileExistsError | NotADirectoryError):
        return (
            f"{exc.filename} is a file where a folder is expected: LMCP_HOME (and every state "
            "folder) must name a folder; move the file away or point LMCP_HOME elsewhere"
        )
    if isinstance(exc, PermissionError):
        return f"permission denied on {exc.filename}: check its owner and mode"
    return None


def _duckdb(name: str, text: str) -> str | None:
    if "Could not set lock" in text:
        return (
            f"{_quoted(text)} is in use by another process (a running collector?): stop it, "
            "or read a copy (`lmcp collector backup --url URL` writes one while it runs)"
        )
    if "not a valid DuckDB database" in text:
        return (
            f"{_quoted(text)} is not a DuckDB database: pass a collector's DuckDB file "
            "or a Parquet export (GET /v1/signals/export?format=parquet)"
        )
    if "parquet" in text.lower() and name in {"InvalidInputException", "IOException"}:
        return (
            f"{_quoted(text)} is not a valid Parquet file: export it again "
            "(GET /v1/signals/export?format=parquet) or pass the DuckDB file"
        )
    return None
