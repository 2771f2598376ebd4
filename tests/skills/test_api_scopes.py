"""Authorization, scope life cycle and scope isolation (spec: Required scope, Errors)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests._servers import HANG_S
from tests.skills.conftest import skill_body

Api = Callable[[str], httpx.Client]


def _code(response: httpx.Response) -> tuple[int, str]:
    assert response.headers["content-type"] == "application/problem+json"
    return response.status_code, response.json()["code"]


# -- authorization failure --------------------------------------------------------------------


def test_authorization_failure_token_lacks_memory_write(api: Api, slug: str) -> None:
    response = api("reader").post("/v1/skills", json=skill_body(slug))
    assert _code(response) == (403, "insufficient_scope")
    assert 'scope="memory:write"' in response.headers["www-authenticate"]
    assert response.json()["errors"][0]["class"] == "authorization"


def test_authorization_failure_no_token_or_unknown_token(api: Api, base_url: str) -> None:
    assert _code(api("").post("/v1/skills", json=skill_body("a"))) == (401, "unauthenticated")
    with httpx.Client(
        base_url=base_url, headers={"Authorization": "Bearer nope-fake"}, timeout=HANG_S
    ) as c:
        response = c.post("/v1/skills", json=skill_body("a"))
    assert _code(response) == (401, "unauthenticated")
    assert response.headers["www-authenticate"].startswith("Bearer")
    with httpx.Client(
        base_url=base_url, headers={"Authorization": "Basic abc"}, timeout=HANG_S
    ) as c:
        assert _code(c.get("/v1/skills")) == (401, "unauthenticated")


def test_authorization_failure_tier_below_pro(api: Api, slug: str) -> None:
    assert _code(api("free").post("/v1/skills", json=skill_body(slug))) == (403, "tier_too_low")


def test_authorization_failure_cannot_read_a_team_scope_without_membership(
    api: Api, slug: str
) -> None:
    api("ann_ops").post("/v1/skills", json=skill_body(slug))
    assert _code(api("bob").get(f"/v1/skills/{slug}", params={"team": "ops"})) == (
        403,
        "scope_forbidden",
    )


def test_authorization_failure_recall_needs_memory_read(api: Api, slug: str) -> None:
    writer = api("writer_only")
    assert writer.post("/v1/skills", json=skill_body(slug)).status_code == 201
    for path in ("/v1/skills", f"/v1/skills/{slug}", f"/v1/skills/{slug}/revisions"):
        response = writer.get(path)
        assert _code(response) == (403, "insufficient_scope")
        assert 'scope="memory:read"' in response.headers["www-authenticate"]


def test_authorization_failure_only_a_team_reviewer_approves(api: Api, slug: str) -> None:
    proposed = api("ann_ops").post("/v1/skills", json=skill_body(slug)).json()["data"]
    url = f"/v1/skills/{slug}/revisions/{proposed['revision_id']}/approve"
    assert _code(api("ann").post(url, params={"team": "ops"})) == (403, "not_a_reviewer")
    assert _code(api("bob").post(url, params={"team": "ops"})) == (403, "scope_forbidden")
    assert _code(api("reader").post(url, params={"team": "ops"})) == (403, "insufficient_scope")


# -- scope life cycle -------------------------------------------------------------------------


def test_scope_lifecycle_personal_publication_is_direct(api: Api, slug: str) -> None:
    saved = api("ann").post("/v1/skills", json=skill_body(slug)).json()
    assert saved["render_status"] == "published"
    live = api("ann").get(f"/v1/skills/{slug}").json()
    assert live["data"]["revision_id"] == saved["data"]["revision_id"]


def test_scope_lifecycle_personal_publish_false_keeps_a_draft_until_published(
    api: Api, slug: str
) -> None:
    client = api("ann")
    draft = client.post("/v1/skills", json=skill_body(slug, publish=False)).json()
    assert draft["render_status"] == "draft"
    assert [w["code"] for w in draft["warnings"]] == ["draft"]
    assert _code(client.get(f"/v1/skills/{slug}")) == (409, "no_live_revision")
    rid = draft["data"]["revision_id"]
    published = client.post(f"/v1/skills/{slug}/revisions/{rid}/publish").json()
    assert published["render_status"] == "published"
    assert client.get(f"/v1/skills/{slug}").json()["data"]["revision_id"] == rid
    assert _code(client.post(f"/v1/skills/{slug}/revisions/{rid}/publish")) == (409, "not_draft")


def test_scope_lifecycle_team_publication_is_stored_as_proposed(api: Api, slug: str) -> None:
    saved = api("ann_ops").post("/v1/skills", json=skill_body(slug)).json()
    assert saved["render_status"] == "proposed"
    assert [w["code"] for w in saved["warnings"]] == ["proposed_for_review"]


def test_scope_lifecycle_proposed_team_revision_is_never_returned_as_live(
    api: Api, slug: str
) -> None:
    first = api("ann_ops").post("/v1/skills", json=skill_body(slug, description=slug))
    first = first.json()["data"]
    reviewer = api("rita_ops")
    reviewer.post(
        f"/v1/skills/{slug}/revisions/{first['revision_id']}/approve", params={"team": "ops"}
    )
    api("ann_ops").post(
        "/v1/skills", json=skill_body(slug, description=slug, instructions="Version two.")
    )
    for who in ("ann", "rita_ops", "reader"):
        live = api(who).get(f"/v1/skills/{slug}", params={"team": "ops"}).json()
        assert live["render_status"] == "published"
        assert live["data"]["revision_id"] == first["revision_id"]
        found = api(who).get("/v1/skills", params={"query": slug}).json()["data"]["results"]
        assert [r["revision_number"] for r in found] == [1]


def test_scope_lifecycle_team_revision_needs_the_review_flow_to_go_live(
    api: Api, slug: str
) -> None:
    saved = api("ann_ops").post("/v1/skills", json=skill_body(slug, description=slug))
    proposed = saved.json()["data"]
    member = api("ann")
    assert _code(member.get(f"/v1/skills/{slug}", params={"team": "ops"})) == (
        409,
        "no_live_revision",
    )
    assert member.get("/v1/skills", params={"query": slug}).json()["data"]["results"] == []
    approved = api("rita_ops").post(
        f"/v1/skills/{slug}/revisions/{proposed['revision_id']}/approve", params={"team": "ops"}
    )
    assert approved.json()["render_status"] == "published"
    live = member.get(f"/v1/skills/{slug}", params={"team": "ops"}).json()
    assert live["data"]["revision_id"] == proposed["revision_id"]


def test_scope_lifecycle_rejected_proposal_stays_on_record(api: Api, slug: str) -> None:
    proposed = api("ann_ops").post("/v1/skills", json=skill_body(slug)).json()["data"]
    rid = proposed["revision_id"]
    rejected = api("rita_ops").post(
        f"/v1/skills/{slug}/revisions/{rid}/reject", params={"team": "ops"}
    )
    assert rejected.json()["render_status"] == "rejected"
    revisions = api("ann").get(f"/v1/skills/{slug}/revisions", params={"team": "ops"}).json()
    assert [(r["revision_id"], r["status"]) for r in revisions["data"]["revisions"]] == [
        (rid, "rejected")
    ]
    pinned = api("ann").get(f"/v1/skills/{slug}", params={"team": "ops", "revision_id": rid})
    assert pinned.json()["render_status"] == "rejected"
    assert [w["code"] for w in pinned.json()["warnings"]] == ["not_live"]
    again = api("rita_ops").post(
        f"/v1/skills/{slug}/revisions/{rid}/approve", params={"team": "ops"}
    )
    assert _code(again) == (409, "not_proposed")


def test_scope_lifecycle_a_reviewer_cannot_approve_their_own_proposal(api: Api, slug: str) -> None:
    own = api("rita_ops").post("/v1/skills", json=skill_body(slug)).json()["data"]
    response = api("rita_ops").post(
        f"/v1/skills/{slug}/revisions/{own['revision_id']}/approve", params={"team": "ops"}
    )
    assert _code(response) == (403, "self_review_forbidden")


def test_scope_lifecycle_team_draft_is_submitted_as_a_proposal(api: Api, slug: str) -> None:
    draft = api("ann_ops").post("/v1/skills", json=skill_body(slug, publish=False)).json()
    assert draft["render_status"] == "draft"
    rid = draft["data"]["revision_id"]
    assert _code(
        api("ann").post(f"/v1/skills/{slug}/revisions/{rid}/publish", params={"team": "ops"})
    ) == (403, "scope_forbidden")  # ann's personal token does not write to the team
    submitted = api("ann_ops").post(
        f"/v1/skills/{slug}/revisions/{rid}/publish", params={"team": "ops"}
    )
    assert submitted.json()["render_status"] == "proposed"


# -- scope isolation --------------------------------------------------------------------------


def test_scope_isolation_another_principals_personal_skill_is_invisible(
    api: Api, slug: str
) -> None:
    api("ann").post("/v1/skills", json=skill_body(slug, description=slug))
    bob = api("bob")
    assert _code(bob.get(f"/v1/skills/{slug}")) == (404, "skill_not_found")
    assert bob.get("/v1/skills", params={"query": slug}).json()["data"]["results"] == []
    assert _code(bob.get(f"/v1/skills/{slug}/revisions")) == (404, "skill_not_found")
    # Bob's own skill of the same slug is a different skill.
    mine = bob.post("/v1/skills", json=skill_body(slug, instructions="Bob's way.")).json()
    assert mine["data"]["revision_number"] == 1
    anns = api("ann").get(f"/v1/skills/{slug}").json()
    assert anns["data"]["skill_id"] != mine["data"]["skill_id"]


def test_scope_isolation_team_skills_visible_to_members_only(api: Api, slug: str) -> None:
    saved = api("ann_ops").post("/v1/skills", json=skill_body(slug, description=slug))
    proposed = saved.json()["data"]
    api("rita_ops").post(
        f"/v1/skills/{slug}/revisions/{proposed['revision_id']}/approve", params={"team": "ops"}
    )
    seen = api("reader").get("/v1/skills", params={"query": slug}).json()["data"]["results"]
    assert [(r["slug"], r["scope"]) for r in seen] == [(slug, {"kind": "team", "team": "ops"})]
    assert api("bob").get("/v1/skills", params={"query": slug}).json()["data"]["results"] == []
    # Without team=, the slug is looked up in the caller's personal scope.
    assert _code(api("ann").get(f"/v1/skills/{slug}")) == (404, "skill_not_found")


@pytest.mark.parametrize("team", ["other", "OPS", "a" * 65])
def test_scope_isolation_unknown_or_malformed_team_refused(api: Api, team: str) -> None:
    status, _ = _code(api("ann").get("/v1/skills/some-skill", params={"team": team}))
    assert status in (403, 422)
