"""The skill store on a real DuckDB file through the service's ``Database``."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from cloudskills import store
from cloudskills.problems import SkillProblem
from cloudskills.records import SkillScope
from cloudskills.store import skills_database
from cloudskills.validation import SkillDraft, validate_save
from service.db import Database

NOW = dt.datetime(2026, 1, 2, 3, 4, 5)
ANN = SkillScope.personal("ann")
OPS = SkillScope.team("ops")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = skills_database(tmp_path / "skills.duckdb")
    database.open()
    yield database
    database.close()


def draft(slug: str = "deploy", **overrides: Any) -> SkillDraft:
    items = [
        {"type": "script", "logical_path": "b.py", "content": "print(1)"},
        {"type": "reference", "logical_path": "a.md", "content": "A", "metadata": {"z": 1}},
    ]
    body: dict[str, Any] = {
        "name": "Deploy",
        "instructions": "Do it.",
        "slug": slug,
        "components_json": json.dumps(items),
    }
    body.update(overrides)
    return validate_save(body)


def test_migration_creates_the_skill_tables(db: Database) -> None:
    tables = {row[0] for row in db.run_sync(lambda con: con.execute("SHOW TABLES").fetchall())}
    assert {
        "skills",
        "skill_revisions",
        "skill_components",
        "skill_revision_state",
        "skill_revision_events",
    } <= tables


def _probe(con: duckdb.DuckDBPyConnection) -> None:
    """What the signal writer does next on the same connection (register + insert)."""
    con.execute("CREATE TABLE IF NOT EXISTS probe (a INTEGER)")
    con.register("incoming", pa.table({"a": [1]}))
    try:
        con.execute("INSERT INTO probe SELECT * FROM incoming").fetchall()
    finally:
        con.unregister("incoming")


def test_every_store_call_leaves_the_shared_connection_usable(db: Database) -> None:
    saved = db.run_sync(lambda con: store.save_revision(con, ANN, draft(), "ann", NOW))
    rid = saved.revision.revision_id
    calls: list[Callable[[duckdb.DuckDBPyConnection], object]] = [
        lambda con: store.save_revision(con, ANN, draft(), "ann", NOW),
        lambda con: store.load_revision(con, ANN, "deploy", None),
        lambda con: store.load_revision(con, ANN, "deploy", rid),
        lambda con: store.read_resource(con, ANN, "deploy", rid, "b.py"),
        lambda con: store.list_revisions(con, ANN, "deploy"),
        lambda con: store.discover(con, "ann", ["ops"], ["deploy"], 5),
    ]
    for call in calls:
        db.run_sync(call)
        db.run_sync(_probe)
    with pytest.raises(SkillProblem):
        db.run_sync(lambda con: store.read_resource(con, ANN, "deploy", rid, "nope"))
    db.run_sync(_probe)


def test_save_stores_components_in_canonical_order_with_sizes_and_hashes(db: Database) -> None:
    saved = db.run_sync(lambda con: store.save_revision(con, ANN, draft(), "ann", NOW)).revision
    assert [(m.path, m.size, m.metadata) for m in saved.manifest] == [
        ("a.md", 1, {"z": 1}),
        ("b.py", 8, {}),
    ]
    assert saved.status == "published" and saved.author == "ann"


def test_initial_status_by_scope_and_publish_intent() -> None:
    assert store.initial_status(ANN, True) == "published"
    assert store.initial_status(ANN, False) == "draft"
    assert store.initial_status(OPS, True) == "proposed"
    assert store.initial_status(OPS, False) == "draft"


def test_revision_numbers_are_per_skill(db: Database) -> None:
    def save(scope: SkillScope, slug: str, text: str) -> int:
        out = db.run_sync(
            lambda con: store.save_revision(con, scope, draft(slug, instructions=text), "x", NOW)
        )
        return out.revision.revision_number

    assert [save(ANN, "a", "1"), save(ANN, "a", "2"), save(ANN, "b", "1"), save(OPS, "a", "1")] == [
        1,
        2,
        1,
        1,
    ]


def test_a_transaction_that_fails_half_way_writes_nothing(db: Database) -> None:
    def half_way(con: duckdb.DuckDBPyConnection) -> None:
        def work() -> None:
            store._run(con, "skill_insert", {  # noqa: SLF001
                "skill_id": "skill_x", "kind": "personal", "owner": "ann", "slug": "half",
                "now": NOW,
            })  # fmt: skip
            raise RuntimeError("half way")

        store._transaction(con, work)  # noqa: SLF001

    with pytest.raises(RuntimeError):
        db.run_sync(half_way)
    with pytest.raises(SkillProblem) as missing:
        db.run_sync(lambda con: store.load_revision(con, ANN, "half", None))
    assert missing.value.code == "skill_not_found"
    db.run_sync(_probe)


def test_transitions_append_events_and_keep_content(db: Database) -> None:
    proposed = db.run_sync(lambda con: store.save_revision(con, OPS, draft(), "ann", NOW)).revision
    rid = proposed.revision_id
    rejected = db.run_sync(
        lambda con: store.transition(con, OPS, "deploy", rid, "reject", "rita", NOW)
    )
    assert rejected.status == "rejected"
    assert (rejected.canonical_hash, rejected.instructions, rejected.manifest) == (
        proposed.canonical_hash,
        proposed.instructions,
        proposed.manifest,
    )
    events = db.run_sync(
        lambda con: con.execute(
            "SELECT seq, status, actor FROM skill_revision_events WHERE revision_id = ? "
            "ORDER BY seq",
            [rid],
        ).fetchall()
    )
    assert events == [(1, "proposed", "ann"), (2, "rejected", "rita")]
