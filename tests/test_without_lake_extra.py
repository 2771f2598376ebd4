"""The core and every extra but ``[lake]`` work without deltalake; the lake says what it needs.

Each check runs in a fresh interpreter where importing ``deltalake`` fails, as on an install
without the ``[lake]`` extra.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._servers import run_child

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent

_BLOCK = textwrap.dedent(
    """
    import sys

    class _NoLake:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "deltalake":
                raise ModuleNotFoundError("No module named 'deltalake'", name="deltalake")
            return None

    sys.meta_path.insert(0, _NoLake())
    """
)


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return run_child(
        [sys.executable, "-c", _BLOCK + textwrap.dedent(code)],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )


def test_the_file_mode_serves_without_deltalake(tmp_path: Path) -> None:
    done = _run(
        f"""
        from fastapi.testclient import TestClient
        from collector.app import create_app
        from collector.settings import CollectorSettings
        import analysis, lmcp.cli  # the shell and triage import too
        app = create_app(CollectorSettings(db_path={str(tmp_path / "c.duckdb")!r}))
        with TestClient(app) as client:
            assert client.get("/readyz").status_code == 200
        print("served")
        """,
        tmp_path,
    )
    assert done.returncode == 0 and "served" in done.stdout, done.stderr


def test_the_lake_mode_names_the_extra_it_needs(tmp_path: Path) -> None:
    done = _run(
        f"""
        from collector.app import create_app
        from collector.settings import CollectorSettings
        from analysis import open_lake
        for attempt in (
            lambda: create_app(CollectorSettings(db_path={str(tmp_path / "c.duckdb")!r},
                                                 lake_uri={str(tmp_path / "lake")!r})),
            lambda: open_lake({str(tmp_path / "lake")!r}),
        ):
            try:
                attempt()
            except RuntimeError as exc:
                print(exc)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[lake] extra") == 2


def test_the_lake_commands_name_the_extra_they_need(tmp_path: Path) -> None:
    done = _run(
        f"""
        from typer.testing import CliRunner
        from lmcp.cli import app
        result = CliRunner().invoke(app, ["lake", "status", "--lake", {str(tmp_path)!r}])
        print(result.exit_code, result.output)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 ") and "[lake] extra" in done.stdout
