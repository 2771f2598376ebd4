"""A skill's owner deletes it (``DELETE`` and ``lmcp skills delete``) and its content leaves the
store; proposals never decided expire after the retention window; a team-scoped token cannot
publish its owner's personal draft.

A real skills service on loopback with a DuckDB file; the clock is injected where time matters.
(Personal data refused at save: ``test_api_personal_data.py``.)
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import httpx
import pytest
from typer.testing import CliRunner

from lmcp.cli import app as lmcp_app
from tests._servers import HANG_S, running_skills
from tests.skills.conftest import CAST, ENVELOPE, make_settings, skill_body, token_of

pytestmark = pytest.mark.slow

CANARY = "Canary-7f3c instructions: check the release and run the smoke test."


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 1, 1, 12, 0)

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Clock]]:
    clock = Clock()
    db_path = tmp_path_factory.mktemp("skills-delete") / "skills.duckdb"
    with running_skills(make_settings(db_path), clock=clock) as url:
        yield url, db_path, clock


def client(url: str, who: str) -> httpx.Client:
    return httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token_of(who)}"}, timeout=HANG_S
    )


def _rows(db_path: Path, sql: str) -> list[tuple[object, ...]]:
    """Read the live database file through a read-only copy (the server holds the lock)."""
    copy = db_path.with_name(f"copy-{dt.datetime.now().timestamp()}.duckdb")
    copy.write_bytes(db_path.read_bytes())
    wal = db_path.with_name(db_path.name + ".wal")
    if wal.exists():
        copy.with_name(copy.name + ".wal").write_bytes(wal.read_bytes())
    with duckdb.connect(str(copy), read_only=True) as con:
        return [tuple(r) for r in con.execute(sql).fetchall()]


def test_owner_deletes_a_skill_and_its_content_leaves_the_store(
    server: tuple[str, Path, Clock],
) -> None:
    url, db_path, _ = server
    components = [{"type": "reference", "logical_path": "guide.md", "content": CANARY}]
    with client(url, "ann") as ann, client(url, "bob") as bob:
        first = ann.post(
            "/v1/skills",
            json=skill_body(
                "to-delete", instructions=CANARY, components_json=json.dumps(components)
            ),
        ).json()["data"]
        ann.post("/v1/skills", json=skill_body("to-delete", instructions=CANARY + " v2"))
        assert bob.delete("/v1/skills/to-delete").status_code == 404  # not bob's (own scope)
        gone = ann.delete("/v1/skills/to-delete")
        assert gone.status_code == 200 and gone.json()["data"]["revisions_purged"] == 2
        ENVELOPE.validate(gone.json())
        assert ann.get("/v1/skills/to-delete").status_code == 404
        assert ann.get("/v1/skills", params={"query": "deployment"}).json()["data"]["results"] == [
            r
            for r in ann.get("/v1/skills", params={"query": "deployment"}).json()["data"]["results"]
            if r["slug"] != "to-delete"
        ]
        assert ann.delete("/v1/skills/to-delete").status_code == 404
        again = ann.post("/v1/skills", json=skill_body("to-delete", instructions="Fresh start."))
        assert again.status_code == 201 and again.json()["data"]["revision_number"] == 3
    texts = _rows(
        db_path,
        "SELECT r.name || r.description || r.instructions || coalesce(c.content, '') "
        "FROM skill_revisions r LEFT JOIN skill_components c USING (revision_id)",
    )
    assert not any(CANARY[:12] in str(t[0]) for t in texts)
    hashes = _rows(
        db_path,
        f"SELECT canonical_hash FROM skill_revisions WHERE revision_id = '{first['revision_id']}'",
    )
    assert hashes == [(first["canonical_hash"],)]


def test_team_scoped_token_cannot_publish_its_owners_personal_draft(
    server: tuple[str, Path, Clock],
) -> None:
    url, _, _ = server
    with client(url, "ann") as ann, client(url, "ann_ops") as ann_ops:
        draft = ann.post("/v1/skills", json=skill_body("private-draft", publish=False)).json()
        revision_id = draft["data"]["revision_id"]
        refused = ann_ops.post(f"/v1/skills/private-draft/revisions/{revision_id}/publish")
        assert refused.status_code == 403 and refused.json()["code"] == "scope_forbidden"
        assert ann.get("/v1/skills/private-draft").status_code == 409  # still not live
        assert ann.post(f"/v1/skills/private-draft/revisions/{revision_id}/publish").is_success


def test_proposals_never_decided_expire_after_the_retention_window(
    server: tuple[str, Path, Clock],
) -> None:
    url, db_path, clock = server
    with client(url, "ann_ops") as ann_ops, client(url, "rita_ops") as rita:
        proposed = ann_ops.post(
            "/v1/skills", json=skill_body("team-proposal", instructions=CANARY)
        ).json()["data"]
        decided = ann_ops.post("/v1/skills", json=skill_body("team-decided")).json()["data"]
        rita.post(
            f"/v1/skills/team-decided/revisions/{decided['revision_id']}/approve",
            params={"team": "ops"},
        )
        revision = f"/v1/skills/team-proposal?team=ops&revision_id={proposed['revision_id']}"
        clock.now += dt.timedelta(days=29)
        assert ann_ops.get(revision).status_code == 200
        clock.now += dt.timedelta(days=2)  # 31 days after the proposal
        assert ann_ops.get(revision).status_code == 404
        assert rita.get("/v1/skills/team-decided", params={"team": "ops"}).status_code == 200
    assert not _rows(
        db_path, f"SELECT 1 FROM skill_revisions WHERE instructions LIKE '%{CANARY[:12]}%'"
    )


def test_cast_has_the_tokens_these_tests_use() -> None:
    assert {"ann", "ann_ops", "rita_ops", "bob"} <= set(CAST)


def test_owner_deletes_a_skill_with_lmcp_skills_delete(server: tuple[str, Path, Clock]) -> None:
    url, _, _ = server
    with client(url, "bob") as bob:
        assert bob.post("/v1/skills", json=skill_body("cli-delete")).status_code == 201
        env = {"LMCP_SKILLS_URL": url, "LMCP_SKILLS_TOKEN": token_of("bob")}
        done = CliRunner().invoke(lmcp_app, ["skills", "delete", "cli-delete", "--yes"], env=env)
        assert done.exit_code == 0, done.output
        assert "1 revision(s) purged" in done.output
        assert bob.get("/v1/skills/cli-delete").status_code == 404
        again = CliRunner().invoke(lmcp_app, ["skills", "delete", "cli-delete", "--yes"], env=env)
        assert again.exit_code == 1
