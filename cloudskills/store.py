"""The skill store: DuckDB statements run on the skills service's one database thread.

Every function here takes the connection and runs synchronously inside ``db.run``: the
service's :class:`~service.db.Database` runs one callable at a time on its one thread, so
reading the newest ``revision_number`` and inserting the next one can never interleave with
another save -- numbers have no gaps and no repeats (the ``UNIQUE (skill_id, revision_number)``
constraint is the backstop). Each write is one transaction.

Revisions and components are only ever INSERTed. The life cycle lives in
``skill_revision_state`` (one row per revision) and every transition is appended to
``skill_revision_events``.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import rfc8785

from cloudskills.hashing import content_hash
from cloudskills.limits import ROOT_PATH
from cloudskills.problems import SkillProblem
from cloudskills.records import (
    ManifestEntry,
    Resource,
    RevisionRecord,
    SkillScope,
    Status,
    Summary,
)
from cloudskills.validation import SkillDraft
from service.db import Database
from service.sql import load_sql

__all__ = [
    "MIGRATIONS_DIR",
    "SQL_DIR",
    "SaveOutcome",
    "delete_skill",
    "discover",
    "expire_proposals",
    "list_revisions",
    "load_revision",
    "read_resource",
    "save_revision",
    "skills_database",
    "transition",
]

T = TypeVar("T")
Con = duckdb.DuckDBPyConnection


#: The skills service's own migrations: applied to its own file, never to the signals file.
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
SQL_DIR = Path(__file__).parent / "sql"


def skills_database(path: Path | str) -> Database:
    """The skills service's database at ``path`` (not yet open)."""
    return Database(path, MIGRATIONS_DIR, logger=logging.getLogger("cloudskills"))


def _run(con: Con, name: str, params: dict[str, Any]) -> list[Any]:
    """Every row of a statement. Always read to the end: DuckDB 2 refuses other work on a
    connection whose last result is unfinished (``fetchone`` leaves it open)."""
    rows: list[Any] = con.execute(load_sql(SQL_DIR, name), params).fetchall()
    return rows


def _one(con: Con, name: str, params: dict[str, Any]) -> Sequence[Any] | None:
    """The first row of a query, or None (read to the end, see :func:`_run`)."""
    rows = _run(con, name, params)
    return rows[0] if rows else None


def _transaction(con: Con, work: Callable[[], T]) -> T:
    con.execute("BEGIN TRANSACTION").fetchall()
    try:
        out = work()
    except BaseException:
        con.execute("ROLLBACK").fetchall()
        raise
    con.execute("COMMIT").fetchall()
    return out


@dataclass(frozen=True, slots=True)
class SaveOutcome:
    revision: RevisionRecord
    #: False when the content's hash equalled the newest revision's: nothing was written.
    created: bool


def initial_status(scope: SkillScope, publish: bool) -> Status:
    """Personal + publish: published. Team + publish: proposed. No publish: draft."""
    if not publish:
        return "draft"
    return "published" if scope.kind == "personal" else "proposed"


def save_revision(
    con: Con, scope: SkillScope, draft: SkillDraft, author: str, now: datetime
) -> SaveOutcome:
    """Create the skill if needed and its next revision, unless the content is unchanged."""
    digest = draft.canonical_hash

    def work() -> SaveOutcome:
        row = _one(
            con, "skill_by_slug", {"kind": scope.kind, "owner": scope.owner, "slug": draft.slug}
        )
        if row is None:
            skill_id = f"skill_{uuid.uuid4().hex}"
            _run(
                con,
                "skill_insert",
                {
                    "skill_id": skill_id,
                    "kind": scope.kind,
                    "owner": scope.owner,
                    "slug": draft.slug,
                    "now": now,
                },
            )
            latest = None
        else:
            skill_id = row[0]
            latest = _one(con, "revision_latest", {"skill_id": skill_id})
        # A purged newest revision (no status) is not "unchanged": the save stores it again.
        if latest is not None and latest[2] == digest and latest[3] is not None:
            return SaveOutcome(_pinned(con, scope, draft.slug, latest[0]), created=False)
        revision_id = f"rev_{uuid.uuid4().hex}"
        number = 1 if latest is None else int(latest[1]) + 1
        _run(
            con,
            "revision_insert",
            {
                "revision_id": revision_id,
                "skill_id": skill_id,
                "revision_number": number,
                "name": draft.name,
                "description": draft.description,
                "instructions": draft.instructions,
                "canonical_hash": digest,
                "component_count": len(draft.components),
                "author": author,
                "now": now,
            },
        )
        if draft.components:
            con.executemany(
                load_sql(SQL_DIR, "component_insert"),
                [
                    [
                        revision_id,
                        ordinal,
                        c.logical_path,
                        c.type,
                        c.mime_type,
                        rfc8785.dumps(dict(c.metadata)).decode("utf-8"),
                        c.content,
                        c.artifact_ref,
                        c.size,
                        c.hash,
                    ]
                    for ordinal, c in enumerate(draft.components)
                ],
            )
        status = initial_status(scope, draft.publish)
        _run(con, "state_insert", {"revision_id": revision_id, "status": status})
        _event(con, revision_id, status, author, now)
        return SaveOutcome(_pinned(con, scope, draft.slug, revision_id), created=True)

    return _transaction(con, work)


def _event(con: Con, revision_id: str, status: Status, actor: str, now: datetime) -> None:
    _run(
        con,
        "event_insert",
        {"revision_id": revision_id, "status": status, "actor": actor, "now": now},
    )


def _record(con: Con, row: Sequence[Any]) -> RevisionRecord:
    manifest = tuple(
        ManifestEntry(
            path=m[0],
            type=m[1],
            mime_type=m[2],
            size=m[3],
            hash=m[4],
            artifact_ref=m[5],
            metadata=json.loads(m[6]),
        )
        for m in _run(con, "manifest_select", {"revision_id": row[4]})
    )
    return RevisionRecord(
        skill_id=row[0],
        slug=row[1],
        scope=SkillScope(row[2], row[3]),
        revision_id=row[4],
        revision_number=int(row[5]),
        name=row[6],
        description=row[7],
        instructions=row[8],
        canonical_hash=row[9],
        author=row[10],
        status=row[11],
        manifest=manifest,
    )


def _select(
    con: Con, scope: SkillScope, slug: str, revision_id: str | None
) -> Sequence[Any] | None:
    return _one(
        con,
        "revision_select",
        {"kind": scope.kind, "owner": scope.owner, "slug": slug, "revision_id": revision_id},
    )


def _pinned(con: Con, scope: SkillScope, slug: str, revision_id: str) -> RevisionRecord:
    row = _select(con, scope, slug, revision_id)
    if row is None:
        raise SkillProblem("revision_not_found")
    return _record(con, row)


def load_revision(
    con: Con, scope: SkillScope, slug: str, revision_id: str | None
) -> RevisionRecord:
    """A pinned revision (any state), or the newest PUBLISHED one when ``revision_id`` is None."""
    row = _select(con, scope, slug, revision_id)
    if row is not None:
        return _record(con, row)
    # A skill whose every revision was purged (deleted) is no longer found.
    if not _run(con, "skill_live_revisions", _where(scope, slug)):
        raise SkillProblem("skill_not_found")
    raise SkillProblem("revision_not_found" if revision_id is not None else "no_live_revision")


def list_revisions(con: Con, scope: SkillScope, slug: str) -> list[RevisionRecord]:
    rows = _run(con, "revisions_list", {"kind": scope.kind, "owner": scope.owner, "slug": slug})
    if not rows:
        raise SkillProblem("skill_not_found")
    return [_record(con, row) for row in rows]


def read_resource(
    con: Con, scope: SkillScope, slug: str, revision_id: str | None, path: str
) -> Resource:
    """One component of a pinned (or the live) revision, with its content.

    ``SKILL.md`` (the reserved root path) reads the revision's instructions.
    """
    revision = load_revision(con, scope, slug, revision_id)
    if path == ROOT_PATH:
        root = ManifestEntry(
            path=ROOT_PATH,
            type="root",
            mime_type="text/markdown",
            size=len(revision.instructions.encode("utf-8")),
            hash=content_hash(revision.instructions),
            artifact_ref=None,
            metadata={},
        )
        return Resource(revision, root, revision.instructions)
    row = _one(con, "component_select", {"revision_id": revision.revision_id, "logical_path": path})
    if row is None:
        raise SkillProblem("resource_not_found")
    entry = ManifestEntry(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6]))
    return Resource(revision, entry, row[7])


#: action -> (state it needs, the problem otherwise)
_TRANSITIONS: dict[str, tuple[Status, str]] = {
    "approve": ("proposed", "not_proposed"),
    "reject": ("proposed", "not_proposed"),
    "publish": ("draft", "not_draft"),
}


def transition(
    con: Con, scope: SkillScope, slug: str, revision_id: str, action: str, actor: str, now: datetime
) -> RevisionRecord:
    """Move a revision along its life cycle (authorization is checked by the caller).

    ``publish`` a draft: personal -> published, team -> proposed. ``approve`` a proposal ->
    published; ``reject`` a proposal -> rejected (it stays on record). A reviewer cannot
    decide on their own proposal.
    """
    needed, problem = _TRANSITIONS[action]

    def work() -> RevisionRecord:
        current = _pinned(con, scope, slug, revision_id)
        if current.status != needed:
            raise SkillProblem(problem)
        if action in ("approve", "reject") and current.author == actor:
            raise SkillProblem("self_review_forbidden")
        target: Status
        if action == "approve":
            target = "published"
        elif action == "reject":
            target = "rejected"
        else:
            target = initial_status(scope, publish=True)
        _run(con, "state_update", {"revision_id": revision_id, "status": target})
        _event(con, revision_id, target, actor, now)
        return _pinned(con, scope, slug, revision_id)

    return _transaction(con, work)


def _purge(con: Con, revision_ids: list[str]) -> None:
    """Remove the content of ``revision_ids``: components and text go, state goes (so no read
    finds them); numbers, hashes, authors, times and events stay, as the record of what was."""
    if revision_ids:
        for name in ("purge_components", "purge_state", "purge_text"):
            _run(con, name, {"ids": revision_ids})


def delete_skill(con: Con, scope: SkillScope, slug: str) -> int:
    """Purge every revision of a skill (authorization is checked by the caller)."""

    def work() -> int:
        ids = [row[0] for row in _run(con, "skill_live_revisions", _where(scope, slug))]
        if not ids:
            raise SkillProblem("skill_not_found")
        _purge(con, ids)
        return len(ids)

    purged = _transaction(con, work)
    con.execute("CHECKPOINT").fetchall()  # the old row versions leave the WAL now
    return purged


def expire_proposals(con: Con, cutoff: datetime) -> int:
    """Purge every proposal proposed before ``cutoff`` and never approved or rejected."""

    def work() -> int:
        ids = [row[0] for row in _run(con, "proposals_expired", {"cutoff": cutoff})]
        _purge(con, ids)
        return len(ids)

    return _transaction(con, work)


def _where(scope: SkillScope, slug: str) -> dict[str, Any]:
    return {"kind": scope.kind, "owner": scope.owner, "slug": slug}


def discover(
    con: Con, principal: str, teams: Sequence[str], tokens: Sequence[str], limit: int
) -> list[Summary]:
    """Level 0: newest published revisions visible to ``principal`` matching every token."""
    rows = _run(
        con,
        "discover",
        {
            "principal": principal,
            "teams": list(teams),
            "tokens": [t.lower() for t in tokens],
            "limit": limit,
        },
    )
    return [
        Summary(r[0], r[1], SkillScope(r[2], r[3]), r[4], int(r[5]), r[6], r[7], r[8]) for r in rows
    ]
