"""The real pipeline the canary audits drive: a collector under uvicorn on loopback writing a
DuckDB file, with every log record and OpenTelemetry span captured; and the sinks read back
from it and from a client's ``LMCP_HOME``.

- ``start_pipeline``: the collector (team and steward tokens, k = 2), logs and spans captured
  from before it starts; ``Pipeline.stop`` stops it gracefully (the writer flushes, DuckDB
  checkpoints);
- ``table_sinks``: every table of the DuckDB file as text, one sink per table (the signals,
  the release tables, the steward audit log, ...);
- ``client_sinks``: every file under ``LMCP_HOME`` that is the client's own state (outbox,
  sent log, latest failure, contributions, settings, ...), i.e. all but the user's data;
- ``user_data``: the user's notes, files, mail and recipes, where canaries MUST be (the
  control that planting worked).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
from pydantic import SecretStr

from collector.settings import CollectorSettings, StewardToken
from privacy_tests.audit.logs import LogCapture, attach_everywhere
from privacy_tests.audit.otel import OtelCapture
from tests._servers import running_collector

__all__ = ["USER_DATA", "Pipeline", "client_sinks", "start_pipeline", "table_sinks", "user_data"]

#: Folders of LMCP_HOME holding the user's own data (canaries are planted there on purpose).
USER_DATA = ("notes", "files", "mail", "recipes")


@dataclass
class Pipeline:
    base: str
    db_path: Path
    logs: LogCapture
    otel: OtelCapture
    _server: Any
    stopped: bool = False

    def stop(self) -> None:
        """Stop the collector gracefully (the writer flushes; DuckDB checkpoints and closes)."""
        if not self.stopped:
            self.stopped = True
            self._server.__exit__(None, None, None)

    def file_bytes(self) -> bytes:
        """The DuckDB file and its WAL, as on disk."""
        data = self.db_path.read_bytes()
        wal = self.db_path.with_name(self.db_path.name + ".wal")
        return data + wal.read_bytes() if wal.exists() else data


@contextmanager
def start_pipeline(tmp: Path, *, team: str, steward: str) -> Iterator[Pipeline]:
    logs = LogCapture()
    undo_root = attach_everywhere(logs)  # the collector's start-up is captured too
    otel = OtelCapture()
    settings = CollectorSettings(
        db_path=tmp / "signals.duckdb",
        read_tokens=[SecretStr(team)],
        steward_tokens=[StewardToken(label="audit", token=SecretStr(steward))],
        rate_limit_enabled=False,
    )
    server = running_collector(settings, span_exporter=otel.spans, metric_reader=otel.metrics)
    base = server.__enter__()
    undo_server = attach_everywhere(logs)  # uvicorn's own (non-propagating) loggers exist now
    handle = Pipeline(base, settings.db_path, logs, otel, server)
    try:
        yield handle
    finally:
        handle.stop()
        undo_server()
        undo_root()


def table_sinks(con: duckdb.DuckDBPyConnection) -> dict[str, bytes]:
    """Every row of every table as text, one sink per table: what the file holds, decoded."""
    out: dict[str, bytes] = {}
    for (table,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
        rows = con.execute(f'SELECT * FROM "{table}"').fetchall()  # a catalogue name
        out[f"DuckDB table {table} (decoded)"] = "\n".join(repr(r) for r in rows).encode()
    return out


def client_sinks(home: Path, label: str) -> dict[str, bytes]:
    """Every file of the client's own state under ``home``, by name."""
    out: dict[str, bytes] = {}
    for path in sorted(home.rglob("*")):
        rel = path.relative_to(home)
        if path.is_file() and rel.parts[0] not in USER_DATA:
            out[f"{label} {rel.as_posix()}"] = path.read_bytes()
    return out


def user_data(home: Path) -> bytes:
    """The user's own notes, files, mail and recipes under LMCP_HOME."""
    parts = []
    for sub in USER_DATA:
        for path in sorted((home / sub).rglob("*")):
            if path.is_file():
                parts.append(path.read_bytes())
    return b"\n".join(parts)
