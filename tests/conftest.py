"""Fixtures shared across the test packages (one definition, so one session cache)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests._once import built_once
from tests._synth import build_synth


@pytest.fixture(scope="session")
def synth_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic DuckDB file (``tests/_synth.py``), released as a collector stores it:
    built once per run (``tests/_once.py``), each worker reading its own copy."""
    own = tmp_path_factory.mktemp("synth") / "synth.duckdb"
    shutil.copy(built_once(tmp_path_factory, "synth.duckdb", build_synth), own)
    return own


@pytest.fixture
def synth_con(synth_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(str(synth_path), read_only=True)
    yield con
    con.close()
