"""``/v1/skills``: the Cloud Skills API (mounted by ``cloudskills.app.create_app``).

    POST /v1/skills                                          save (save_cloud_skill)
    GET  /v1/skills?query=&limit=                            Level 0 discovery (published only)
    GET  /v1/skills/{slug}?team=&revision_id=                root manifest: live or pinned
    GET  /v1/skills/{slug}/resources/{path}?team=&revision_id=   one resource, with content
    GET  /v1/skills/{slug}/revisions?team=                   every revision and its state
    POST /v1/skills/{slug}/revisions/{revision_id}/publish?team=   draft -> published/proposed
    POST /v1/skills/{slug}/revisions/{revision_id}/approve?team=   proposed -> published
    POST /v1/skills/{slug}/revisions/{revision_id}/reject?team=    proposed -> rejected
    DELETE /v1/skills/{slug}?team=                           purge a skill the caller owns

Only a save takes a request body (``BODIES``: at most ``MAX_SAVE_BODY_BYTES``, held by the
service's body guard before the route reads it). No route updates a revision's content.
Deleting a skill, and the expiry of proposals never decided within
``PROPOSAL_RETENTION_DAYS``, purge content: revisions keep their numbers and hashes, not their
text. Every error is the services' problem+json
with a stable ``code`` (see :mod:`cloudskills.problems`).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Awaitable, Callable, Sequence
from types import MappingProxyType
from typing import Annotated, Any, ParamSpec

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from cloudskills import store
from cloudskills.auth import (
    Authenticator,
    read_scope,
    require_reviewer,
    require_save,
    require_scope,
    write_scope,
)
from cloudskills.envelope import (
    DRAFT,
    NOT_LIVE,
    PROPOSED,
    UNCHANGED,
    SkillWarning,
    deletion_envelope,
    discovery_envelope,
    resource_envelope,
    revisions_envelope,
    root_envelope,
)
from cloudskills.limits import (
    MAX_QUERY_CHARS,
    MAX_SAVE_BODY_BYTES,
    PROPOSAL_PURGE_INTERVAL_S,
    PROPOSAL_RETENTION_DAYS,
)
from cloudskills.principals import SkillPrincipal
from cloudskills.problems import SkillProblem
from cloudskills.records import SkillScope
from cloudskills.validation import InvalidSkill, SkillDraft, validate_save
from contract.catalogue import load_catalogue
from service.db import Database
from service.errors import ProblemError

__all__ = ["BODIES", "PREFIX", "RevisionId", "Slug", "Team", "build_router", "to_problem"]

P = ParamSpec("P")

_TEAM = r"^[a-z0-9][a-z0-9-]{0,63}$"
Team = Annotated[str | None, Query(min_length=1, max_length=64, pattern=_TEAM)]
RevisionId = Annotated[str | None, Query(min_length=1, max_length=64)]
Slug = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")]


def _save_body_schema() -> dict[str, Any]:
    """OpenAPI request body of a save: the catalogue's save_cloud_skill input schema."""
    schema = dict(load_catalogue().tools["save_cloud_skill"].input_schema)
    schema["additionalProperties"] = False
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


_SAVE_BODY = _save_body_schema()
PREFIX = "/v1/skills"
#: The request bodies of these routes (``service.bodies.BodyGuard``): a save's only.
BODIES = MappingProxyType({("POST", PREFIX): MAX_SAVE_BODY_BYTES})
_SUMMARIES = {
    "publish": "Publish a draft (personal: published; team: proposed for review)",
    "approve": "Approve a proposed team revision (a reviewer, not its author)",
    "reject": "Reject a proposed team revision (it stays on record)",
}


def to_problem(problem: SkillProblem) -> ProblemError:
    """The problem+json for a :class:`SkillProblem` (every entry names its class)."""
    if problem.issues:
        errors = [issue.to_dict() for issue in problem.issues]
    else:
        errors = [
            {
                "pointer": "",
                "rule": problem.code,
                "detail": problem.detail,
                "class": problem.problem_class,
            }
        ]
    headers: dict[str, str] | None = None
    if problem.code == "unauthenticated":
        headers = {"WWW-Authenticate": 'Bearer realm="lmcp-skills"'}
    elif problem.code == "insufficient_scope":
        headers = {
            "WWW-Authenticate": (
                f'Bearer realm="lmcp-skills", error="insufficient_scope", scope="{problem.scope}"'
            )
        }
    return ProblemError(
        problem.status, problem.code, problem.detail, errors=errors, headers=headers
    )


def _problems(fn: Callable[P, Awaitable[Any]]) -> Callable[P, Awaitable[Any]]:
    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
        try:
            return await fn(*args, **kwargs)
        except SkillProblem as problem:
            raise to_problem(problem) from None

    return wrapper


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _strict_object(raw: bytes) -> dict[str, Any]:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            raise ValueError("duplicate key")
        return out

    def no_constants(_: str) -> Any:
        raise ValueError("not JSON")

    try:
        body = json.loads(raw, object_pairs_hook=no_duplicates, parse_constant=no_constants)
    except (ValueError, RecursionError):
        raise SkillProblem("body_not_object") from None
    if not isinstance(body, dict):
        raise SkillProblem("body_not_object")
    return body


def _parse_and_validate(raw: bytes) -> SkillDraft:
    try:
        return validate_save(_strict_object(raw))
    except InvalidSkill as invalid:
        raise SkillProblem.from_issues(invalid.issues) from None


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_SAVE_BODY_BYTES:
        raise SkillProblem("body_too_large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_SAVE_BODY_BYTES:
            raise SkillProblem("body_too_large")
        chunks.append(chunk)
    return b"".join(chunks)


def build_router(
    principals: Sequence[SkillPrincipal],
    db: Database,
    *,
    clock: Callable[[], dt.datetime] = _now,
    proposal_retention: dt.timedelta = dt.timedelta(days=PROPOSAL_RETENTION_DAYS),
) -> APIRouter:
    """The ``/v1/skills`` routes, authenticating against ``principals``.

    ``clock`` (naive UTC) stamps events and decides when proposals expire.
    """
    auth = Authenticator(principals)
    router = APIRouter(prefix=PREFIX, tags=["skills"])
    last_purge: list[dt.datetime] = []

    async def expire_due() -> None:
        """Purge expired proposals before answering, at most once per purge interval."""
        now = clock()
        if last_purge and (now - last_purge[0]).total_seconds() < PROPOSAL_PURGE_INTERVAL_S:
            return
        last_purge[:] = [now]
        await db.run(lambda con: store.expire_proposals(con, now - proposal_retention))

    def caller(request: Request) -> SkillPrincipal:
        return auth.authenticate(request.headers.get("authorization"))

    def reader(request: Request) -> SkillPrincipal:
        principal = caller(request)
        require_scope(principal, "memory:read")
        return principal

    @router.post(
        "",
        status_code=201,
        summary="Save a Cloud Skill: its next immutable revision (save_cloud_skill)",
        openapi_extra=_SAVE_BODY,
    )
    @_problems
    async def save_skill(request: Request) -> JSONResponse:
        principal = caller(request)
        scope = require_save(principal)
        raw = await _read_body(request)
        draft = await run_in_threadpool(_parse_and_validate, raw)
        outcome = await db.run(
            lambda con: store.save_revision(con, scope, draft, principal.principal, clock())
        )
        warnings: list[SkillWarning] = []
        if not outcome.created:
            warnings.append(UNCHANGED)
        elif outcome.revision.status == "proposed":
            warnings.append(PROPOSED)
        elif outcome.revision.status == "draft":
            warnings.append(DRAFT)
        body = root_envelope(outcome.revision, warnings)
        return JSONResponse(body, status_code=201 if outcome.created else 200)

    @router.get("", summary="Level 0 discovery over the skills the caller may see")
    @_problems
    async def discover_skills(
        request: Request,
        query: Annotated[str | None, Query(max_length=MAX_QUERY_CHARS)] = None,
        limit: Annotated[int, Query(ge=1, le=100)] = 20,
    ) -> JSONResponse:
        principal = reader(request)
        await expire_due()
        tokens = (query or "").split()
        teams = [m.team for m in principal.teams]
        found = await db.run(
            lambda con: store.discover(con, principal.principal, teams, tokens, limit + 1)
        )
        return JSONResponse(discovery_envelope(found[:limit], truncated=len(found) > limit))

    @router.get("/{slug}", summary="A skill's root manifest: live, or pinned by revision_id")
    @_problems
    async def load_root(
        request: Request, slug: Slug, team: Team = None, revision_id: RevisionId = None
    ) -> JSONResponse:
        scope = read_scope(reader(request), team)
        await expire_due()
        revision = await db.run(lambda con: store.load_revision(con, scope, slug, revision_id))
        warnings = [NOT_LIVE] if revision.status != "published" else []
        return JSONResponse(root_envelope(revision, warnings))

    @router.get("/{slug}/resources/{path:path}", summary="One resource of a revision")
    @_problems
    async def read_resource(
        request: Request,
        slug: Slug,
        path: Annotated[str, Path(min_length=1, max_length=512)],
        team: Team = None,
        revision_id: RevisionId = None,
    ) -> JSONResponse:
        scope = read_scope(reader(request), team)
        await expire_due()
        resource = await db.run(
            lambda con: store.read_resource(con, scope, slug, revision_id, path)
        )
        return JSONResponse(resource_envelope(resource))

    @router.get("/{slug}/revisions", summary="Every revision of a skill and its state")
    @_problems
    async def list_revisions(request: Request, slug: Slug, team: Team = None) -> JSONResponse:
        scope = read_scope(reader(request), team)
        await expire_due()
        revisions = await db.run(lambda con: store.list_revisions(con, scope, slug))
        return JSONResponse(revisions_envelope(revisions))

    async def _transition(
        request: Request, slug: str, revision_id: str, team: str | None, action: str
    ) -> JSONResponse:
        principal = caller(request)
        scope: SkillScope
        if action == "publish":
            require_scope(principal, "memory:write")
            scope = read_scope(principal, team)
            if write_scope(principal) != scope:
                # Publishing is a write to the revision's scope: a team-scoped token cannot
                # publish its owner's personal draft, nor a personal token a team's.
                raise SkillProblem("scope_forbidden")
        else:
            scope = require_reviewer(principal, team)
        await expire_due()
        revision = await db.run(
            lambda con: store.transition(
                con, scope, slug, revision_id, action, principal.principal, clock()
            )
        )
        warnings = [PROPOSED] if revision.status == "proposed" else []
        return JSONResponse(root_envelope(revision, warnings))

    def make_endpoint(action: str) -> Callable[..., Awaitable[JSONResponse]]:
        async def endpoint(
            request: Request,
            slug: Slug,
            revision_id: Annotated[str, Path(min_length=1, max_length=64)],
            team: Team = None,
        ) -> JSONResponse:
            return await _transition(request, slug, revision_id, team, action)

        return _problems(endpoint)

    @router.delete("/{slug}", summary="Delete a skill the caller owns: purge its content")
    @_problems
    async def delete_skill(request: Request, slug: Slug, team: Team = None) -> JSONResponse:
        principal = caller(request)
        require_scope(principal, "memory:write")
        scope = read_scope(principal, team)
        # The owner of a personal skill is its principal (with a personal token); a team's
        # skills are deleted by a reviewer of that team holding the team's token.
        if write_scope(principal) != scope:
            raise SkillProblem("scope_forbidden")
        if scope.kind == "team":
            require_reviewer(principal, team)
        purged = await db.run(lambda con: store.delete_skill(con, scope, slug))
        return JSONResponse(deletion_envelope(slug, scope.kind, purged))

    for action in ("publish", "approve", "reject"):
        router.add_api_route(
            f"/{{slug}}/revisions/{{revision_id}}/{action}",
            make_endpoint(action),
            methods=["POST"],
            name=f"{action}_revision",
            summary=_SUMMARIES[action],
        )

    return router
