"""Two services, two stores: Cloud Skills never writes the signals file, the collector never
writes the skills file, and the collector does not serve ``/v1/skills`` at all.

The composition is the demo's and a deployment's: the collector (as the shell composes it) and
the skills service side by side, each with its own DuckDB file; a real client saves a skill
through ``LMCP_SKILLS_URL`` and reports friction through ``LMCP_COLLECTOR_URL``. Then both files
are opened and their catalogues (``duckdb_tables()``) compared.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import duckdb
import httpx

from client.runtime import Runtime
from cloudskills.store import MIGRATIONS_DIR as SKILLS_MIGRATIONS
from collector.db import migrate
from collector.settings import CollectorSettings
from service.db import apply_migrations
from tests._delivery import accepted, deliver_queued
from tests._servers import HANG_S, running_collector, running_skills
from tests.skills.conftest import make_settings, token_of


def _tables(path: Path) -> set[str]:
    with duckdb.connect(str(path), read_only=True) as con:
        rows = con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT internal").fetchall()
        views = con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()
    return {str(r[0]) for r in rows + views}


def _created_by(apply: Callable[[duckdb.DuckDBPyConnection], object]) -> set[str]:
    """The tables one service's migrations create (on a throw-away in-memory database)."""
    with duckdb.connect(":memory:") as con:
        apply(con)
        rows = con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    return {str(r[0]) for r in rows} - {"schema_migrations"}


def test_skills_and_signals_live_in_two_files_that_never_share_a_table(tmp_path: Path) -> None:
    signals_db, skills_db = tmp_path / "signals.duckdb", tmp_path / "skills.duckdb"
    collector_settings = CollectorSettings(db_path=signals_db, rate_limit_enabled=False)
    with (
        running_collector(collector_settings) as collector_url,
        running_skills(make_settings(skills_db)) as skills_url,
    ):
        home = tmp_path / "home"
        home.mkdir()
        # The user's choice turns signals on (the environment can only turn them off).
        (home / "settings.json").write_text('{"anonymous_signals": "on"}')
        env = {
            "LMCP_HOME": str(home),
            "LMCP_COLLECTOR_URL": collector_url,
            "LMCP_SKILLS_URL": skills_url,
            "LMCP_SKILLS_TOKEN": token_of("ann"),
        }
        with Runtime.from_env(env) as runtime:
            saved = runtime.host.dispatch(
                "save_cloud_skill",
                {"name": "Two stores", "instructions": "Check both files.", "slug": "two-stores"},
            )
            assert saved.ok, saved.result
            missing = runtime.host.dispatch("recall_cloud_skill", {"slug": "no-such-skill"})
            assert not missing.ok
            sent = runtime.host.dispatch(
                "report_friction",
                {"friction_type": "cannot_complete", "tool_attempted": "recall_cloud_skill"},
            )
            assert accepted(sent.result), sent.result
            deliver_queued(runtime)
        # The collector is not a skills server (nor a proxy to one).
        refused = httpx.get(f"{collector_url}/v1/skills", timeout=HANG_S)
        assert refused.status_code == 404
        assert httpx.get(f"{skills_url}/v1/signals/count", timeout=HANG_S).status_code == 404

    skills_tables = _created_by(lambda con: apply_migrations(con, SKILLS_MIGRATIONS))
    signals_tables = _created_by(migrate)
    assert skills_tables and signals_tables and not skills_tables & signals_tables

    in_signals_file = _tables(signals_db)
    assert "signals" in in_signals_file
    assert not in_signals_file & skills_tables, in_signals_file
    assert not any("skill" in name for name in in_signals_file), in_signals_file

    in_skills_file = _tables(skills_db)
    assert skills_tables <= in_skills_file
    assert not in_skills_file & signals_tables, in_skills_file

    # Both writes really happened, each in its own file.
    with duckdb.connect(str(skills_db), read_only=True) as con:
        assert con.execute("SELECT slug FROM skills").fetchall() == [("two-stores",)]
    with duckdb.connect(str(signals_db), read_only=True) as con:
        row = con.execute("SELECT count(*), max(received_day) FROM signals").fetchone()
    assert row is not None and row[0] == 1 and row[1] <= dt.datetime.now(dt.UTC).date()


def test_the_collector_package_does_not_know_cloud_skills() -> None:
    """No setting, router, migration or import: the word is absent from its code and SQL (the
    catalogue's tool names aside: in the ENUM of tool names, and as the values of the generated
    decoder's ``Literal`` of tool names, ``collector/_wire.py``)."""
    from contract.schema import ToolName

    root = Path(__file__).resolve().parents[2] / "collector"
    tool_names = {f'"{name.value}",' for name in ToolName}
    mentions = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".py", ".sql"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if "CREATE TYPE tool_name AS ENUM" in line:
                continue
            if path.name == "_wire.py" and line.strip() in tool_names:
                continue
            if "skill" in line.lower():
                mentions.append(f"{path.relative_to(root)}: {line.strip()}")
    assert mentions == []


def test_the_demo_check_catches_a_skills_table_in_the_signals_file(tmp_path: Path) -> None:
    from scripts import demo
    from scripts._demo_fleet import AUTHOR_SKILL

    signals_db, skills_db = tmp_path / "signals.duckdb", tmp_path / "skills.duckdb"
    with duckdb.connect(str(signals_db)) as con:
        migrate(con)
    with duckdb.connect(str(skills_db)) as con:
        apply_migrations(con, SKILLS_MIGRATIONS)
        con.execute(
            "INSERT INTO skills VALUES ('s1', 'personal', 'demo-author', $slug, now()::TIMESTAMP)",
            {"slug": AUTHOR_SKILL["slug"]},
        )
    assert demo._verify_stores(signals_db, skills_db) == []
    with duckdb.connect(str(signals_db)) as con:  # the old layout: skills beside the signals
        apply_migrations(con, SKILLS_MIGRATIONS)
    assert demo._verify_stores(signals_db, skills_db) != []
